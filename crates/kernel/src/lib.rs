//! The single-thread kernel of broadphase.

mod reference;

pub use broadphase_storage::{Aabb, Axis, Corner, InputError};
pub use reference::{SortAndSweep, brute_force_pairs, brute_force_query};
