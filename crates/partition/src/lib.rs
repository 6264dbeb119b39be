//! All cores for broadphase: the load-balancer grid tree, which splits a
//! frame's boxes into regions, runs the single-thread kernel on each
//! region as a scoped job of the `broadphase-jobs` job system, and merges
//! the pairs into one deterministic list.
//!
//! See `docs/PARTITION.md` for the model in full.
//!
//! # Who owns which memory
//!
//! - The caller owns the boxes: a frame's jobs borrow them for the frame's
//!   scope, so nothing is copied. The caller also owns the output `Vec`,
//!   cleared and refilled.
//! - The [`GridTree`] owns, per thread of the job system, a kernel grid
//!   ([`AdaptiveGrid`](broadphase_kernel::AdaptiveGrid)) and its scratch,
//!   the buffers its splits write, one arena for the regions' pairs, and
//!   the per-box `FastUnique` shards of the optional merge. All of it is
//!   reused: a warm frame allocates nothing on any thread.
//!
//! # How a frame flows
//!
//! 1. Inputs of at most `split_threshold` boxes: the kernel runs on the
//!    calling thread, with no job at all.
//! 2. Root split: a grid over the extent of a fixed sample of the boxes,
//!    as fine as the count needs (up to 16 cells per axis: two 4×4×4
//!    levels at once); one job per chunk of the input validates its boxes,
//!    counts them per cell and scatters them into a buffer of its own. A
//!    box goes into every cell it overlaps.
//! 3. Cells of more than 65,536 boxes split again in parallel passes like
//!    the root. Every other occupied cell is one job: a cell over the
//!    threshold splits again in its job and spawns its children as
//!    sub-jobs; the others, the regions, run the kernel with their
//!    thread's grid and keep the pairs whose reference point (the min
//!    corner of the intersection) lies in their half-open region — each
//!    pair in exactly one region.
//! 4. The calling thread runs jobs too while it waits; then it sorts the
//!    regions' lists by their place in the tree and concatenates them.
//!    The tree is fixed by the data alone, and each region sees its boxes
//!    in input order however the input was chunked, so the output is
//!    identical for any number of threads.
//!
//! # Example
//!
//! ```
//! use broadphase_jobs::JobSystem;
//! use broadphase_kernel::{Aabb, SortAndSweep};
//! use broadphase_partition::GridTree;
//! use glam::Vec3;
//!
//! // 20,000 small boxes on a jittered lattice, some touching.
//! let boxes: Vec<Aabb> = (0..20_000u32)
//!     .map(|i| {
//!         let jitter = (i.wrapping_mul(2_654_435_761) % 1000) as f32 / 1000.0;
//!         let c = Vec3::new((i % 30) as f32, ((i / 30) % 30) as f32, (i / 900) as f32) * 2.0;
//!         Aabb::new(c, c + Vec3::splat(1.0 + jitter))
//!     })
//!     .collect();
//!
//! let jobs = JobSystem::new(2); // the calling thread and one worker
//! let mut tree = GridTree::default(); // keep both across frames
//! let mut pairs = Vec::new();
//! tree.pairs(&jobs, &boxes, &mut pairs)?;
//! assert!(tree.stats().regions > 1);
//!
//! let mut expected = Vec::new();
//! SortAndSweep::default().pairs(&boxes, &mut expected)?;
//! pairs.sort_unstable();
//! expected.sort_unstable();
//! assert_eq!(pairs, expected);
//! # Ok::<(), broadphase_kernel::InputError>(())
//! ```

#![forbid(unsafe_code)]

mod profile;
mod tree;

pub use tree::{GridTree, GridTreeConfig, PartitionError, TreeStats};
