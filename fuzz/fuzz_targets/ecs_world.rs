//! Arbitrary bytes → a game's frames (spawns, despawns, moves, static and
//! layer changes, snapshots, restores); every run of the ECS plugin must
//! give brute force's pairs, events and contact lists, or the typed error
//! naming a bad box. See tests/support/fuzz_world.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/fuzz_world.rs"]
mod fuzz_world;

fuzz_target!(|data: &[u8]| {
    fuzz_world::check_world(data);
});
