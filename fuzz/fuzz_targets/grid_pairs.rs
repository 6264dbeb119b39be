//! Arbitrary bytes → boxes (NaN, ±inf, subnormals, ±3.4e38, min > max,
//! duplicates, touching faces) and a grid configuration; the grid must
//! give brute force's typed error or brute force's exact pairs and queries.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/fuzz_input.rs"]
// Shared by every target; each calls only its own check.
#[allow(dead_code)]
mod fuzz_input;

fuzz_target!(|data: &[u8]| fuzz_input::check_grid(data));
