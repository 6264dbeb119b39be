//! Arbitrary bytes → boxes (as for `grid_pairs`), then ray, point and
//! sphere queries made from them: the grid must give brute force's hits,
//! in order, or the same typed error.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/fuzz_input.rs"]
// Shared by every target; each calls only its own check.
#[allow(dead_code)]
mod fuzz_input;

fuzz_target!(|data: &[u8]| fuzz_input::check_rays(data));
