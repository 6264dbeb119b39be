//! One adapter per peer crate. Each frame function does the whole frame
//! (build from the boxes, then all pairs), and keeps only candidates that
//! pass broadphase's exact inclusive overlap test, so every method pays the
//! same exact-test filter and reports the same pair set.

pub mod broccoli;
pub mod bvh;
pub mod kiddo;
pub mod obvhs;
pub mod parry;
pub mod plain_grid;
pub mod rstar;

use broadphase::Aabb;

/// Pushes `[min, max]` of the two ids if the boxes overlap (inclusive).
#[inline]
pub fn keep(boxes: &[Aabb], i: u32, j: u32, out: &mut Vec<[u32; 2]>) {
    if i != j && boxes[i as usize].overlaps(&boxes[j as usize]) {
        out.push(if i < j { [i, j] } else { [j, i] });
    }
}
