//! Arbitrary bytes → hostile input (NaN, ±inf, subnormals, ±3.4e38,
//! min > max, duplicates, touching); the structure must give the oracle's
//! typed error or its exact answer: the three grids on points, the
//! multi-level grid on spheres made of the boxes, the periodic grid in a box
//! made of them, a query set of the max corners, Verlet lists over points
//! moved toward them. See tests/support/fuzz_input.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/fuzz_input.rs"]
// Shared by every target; each calls only its own check.
#[allow(dead_code)]
mod fuzz_input;

fuzz_target!(|data: &[u8]| fuzz_input::check_neighbors(data));
