//! The kernel on all cores: the grid tree, which runs the kernel's top
//! splits as parallel passes over chunks of a frame's boxes, walks what
//! lies under each node below them as a scoped job of the
//! `broadphase-jobs` job system, and merges the pairs into one
//! deterministic list; and batch queries
//! ([`cast_rays`], [`BatchHits`]), many rays or shapes against one kept
//! grid on all threads. The persistent broad phase, which runs the grid
//! tree for its full rebuilds, is the `broadphase-persistent` crate.
//!
//! See `docs/PARTITION.md` for the model in full. What follows is about
//! the grid tree.
//!
//! # Who owns which memory
//!
//! - The caller owns the boxes: a frame's jobs borrow them for the frame's
//!   scope, so nothing is copied. The caller also owns the output `Vec`,
//!   cleared and refilled.
//! - The [`GridTree`] owns per chunk of the input its quantized boxes and
//!   their shares of each split's children; per thread of the job system a
//!   kernel grid ([`AdaptiveGrid`](broadphase_kernel::AdaptiveGrid)); and
//!   one arena for the node jobs' pairs. All of it is reused: a warm frame
//!   allocates nothing on any thread.
//!
//! # How a frame flows
//!
//! 1. Inputs of at most `split_threshold` boxes: the kernel runs on the
//!    calling thread, with no job at all.
//! 2. The input is cut into chunks (their size set by the box count
//!    alone); one job per chunk takes its bounds and checks its boxes, then
//!    quantizes and counts them in the root's child cells, then scatters
//!    them into its share of each child — the kernel's own steps
//!    (`broadphase_kernel::parts`), the kernel's verdicts on the totals.
//! 3. A child holding most of the input is split again the same way; every
//!    other child is one job that walks everything under it with the
//!    kernel, finding each leaf's pairs as it goes. Each pair is reported by the
//!    one leaf holding its reference point, so nothing is found twice.
//! 4. The calling thread runs jobs too while it waits; then it sorts the
//!    jobs' lists by their node's place in the kernel's hierarchy and
//!    concatenates them. The hierarchy is fixed by the data alone, so the
//!    output is identical for any number of threads. With [`PairMerge::ShardedFastUnique`] the leaves
//!    report every pair they find instead, the jobs put them into per-box
//!    sets sharded behind mutexes, and the merge lists the sets in sorted
//!    order: the same pairs, more work.
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
//! tree.find_pairs(&jobs, &boxes, &mut pairs)?;
//! assert!(tree.stats().regions > 1);
//!
//! let mut expected = Vec::new();
//! SortAndSweep::default().find_pairs(&boxes, &mut expected)?;
//! pairs.sort_unstable();
//! expected.sort_unstable();
//! assert_eq!(pairs, expected);
//! # Ok::<(), broadphase_kernel::InputError>(())
//! ```

#![forbid(unsafe_code)]

mod batch;
mod profile;
mod regions;
mod tree;

pub use batch::{BatchError, BatchHits, cast_rays};
pub use regions::{Assignment, RegionError, Regions};
pub use tree::{GridTree, GridTreeConfig, PairMerge, PartitionError, TreeStats};
