//! Arbitrary bytes → hostile input (NaN, ±inf, subnormals, ±3.4e38,
//! min > max, duplicates, touching); the structure must give the oracle's
//! typed error or its exact answer. See tests/support/fuzz_input.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/fuzz_input.rs"]
// Shared by every target; each calls only its own check.
#[allow(dead_code)]
mod fuzz_input;

fuzz_target!(|data: &[u8]| fuzz_input::check_grid_tree(data));
