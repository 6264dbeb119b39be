//! Neighbor lists filled on all cores: the kernel's neighbor structures
//! search slot ranges independently, so the job system fills one range per
//! job and one pass joins them in slot order.

use crate::jobs::{JobError, JobSystem};
use broadphase_kernel::{NeighborLists, NeighborSearch};
use parking_lot::Mutex;
use std::sync::Arc;

/// Sorted-order CSR neighbor lists of a built neighbor structure, filled by
/// the job system.
///
/// The slots are cut into a few ranges per thread; each job fills its
/// range's lists into a buffer kept here across frames, and the ranges are
/// joined in slot order, so the result equals
/// `structure.sorted_neighbor_lists(0..len, ..)` exactly, for any thread
/// count. The build itself stays on the calling thread.
///
/// The structure is shared with the workers through an `Arc` (jobs outlive
/// any borrow the calling thread could lend them without `unsafe`).
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{CountingSortGrid, NeighborLists, NeighborSearch};
/// use broadphase_partition::{JobSystem, ParallelNeighborLists};
/// use glam::Vec3;
/// use std::sync::Arc;
///
/// let points: Vec<Vec3> = (0..1000).map(|i| Vec3::new((i % 10) as f32, (i / 10 % 10) as f32, (i / 100) as f32)).collect();
/// let mut grid = CountingSortGrid::default();
/// grid.build(&points, 1.0)?;
/// let grid = Arc::new(grid);
///
/// let jobs = JobSystem::new(2);
/// let mut parallel = ParallelNeighborLists::default();
/// let mut lists = NeighborLists::default();
/// parallel.fill(&jobs, &grid, &mut lists)?;
///
/// let mut single = NeighborLists::default();
/// grid.sorted_neighbor_lists(0..grid.len(), &mut single);
/// assert_eq!(lists.offsets(), single.offsets());
/// assert_eq!(lists.indices(), single.indices());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ParallelNeighborLists {
    /// One buffer per range, reused across frames.
    parts: Arc<Mutex<Vec<NeighborLists>>>,
}

/// Ranges per thread: a few, so a dense range does not hold up the frame.
const RANGES_PER_THREAD: usize = 4;

impl ParallelNeighborLists {
    /// Replaces `out` with the sorted-order neighbor lists of every slot of
    /// `structure` (see [`NeighborSearch::sorted_neighbor_lists`]).
    ///
    /// # Errors
    /// [`JobError`] if a job panicked; `out` is then unspecified.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{NeighborLists, NeighborSearch, SpatialHash};
    /// use broadphase_partition::{JobSystem, ParallelNeighborLists};
    /// use glam::Vec3;
    /// use std::sync::Arc;
    /// let mut hash = SpatialHash::default();
    /// hash.build(&[Vec3::ZERO, Vec3::X, Vec3::Y], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// ParallelNeighborLists::default().fill(&JobSystem::new(2), &Arc::new(hash), &mut lists)?;
    /// assert_eq!(lists.total(), 4); // 0-1 and 0-2, each in both rows
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill<S>(
        &mut self,
        jobs: &JobSystem,
        structure: &Arc<S>,
        out: &mut NeighborLists,
    ) -> Result<(), JobError>
    where
        S: NeighborSearch + Send + Sync + 'static,
    {
        let len = structure.len();
        let ranges = (jobs.threads() * RANGES_PER_THREAD).clamp(1, len.max(1));
        let step = len.div_ceil(ranges).max(1);
        {
            let mut parts = self.parts.lock();
            if parts.len() < ranges {
                parts.resize_with(ranges, NeighborLists::default);
            }
        }
        let group = jobs.group();
        for range in 0..ranges {
            let (structure, parts) = (Arc::clone(structure), Arc::clone(&self.parts));
            group.spawn(move |_| {
                // Take the range's buffer out, fill it unlocked, put it back.
                let mut lists = std::mem::take(&mut parts.lock()[range]);
                let from = (range * step).min(len);
                structure.sorted_neighbor_lists(from..(from + step).min(len), &mut lists);
                parts.lock()[range] = lists;
            });
        }
        group.wait()?;
        out.clear();
        let parts = self.parts.lock();
        for lists in &parts[..ranges] {
            out.append_rows(lists);
        }
        if len == 0 {
            structure.sorted_neighbor_lists(0..0, out);
        }
        Ok(())
    }
}
