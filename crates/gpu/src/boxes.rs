//! [`GpuBoxPairs`]: every overlapping pair of boxes, found on the device.

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::grid::{plan_boxes, validate_boxes};
use crate::neighbors::{GpuNeighborSearch, GpuSearchConfig, Items, Walk};
use crate::timing::{CallClock, GpuTimings};
use broadphase_storage::Aabb;

/// All overlapping pairs of boxes on the GPU: the same set as the CPU's
/// `AdaptiveGrid::find_pairs` (overlap is inclusive: touching faces
/// overlap), each pair once as `[a, b]` with `a < b`, sorted.
///
/// It runs the counting-sort grid of
/// [`GpuNeighborSearch`] (sharing its passes and buffers) on the boxes'
/// min corners, with cells wider than the widest box: two overlapping
/// boxes' min corners are then at most one cell apart, so each box finds
/// its partners of a higher index in the 3×3×3 cells around its own, by
/// comparisons alone (exact). A count pass, a prefix sum and a fill pass
/// write each box's partners as a sorted CSR row; the pairs are those rows.
///
/// Best for boxes of similar sizes: one huge box widens every cell (still
/// exact, but the cells then hold many boxes each).
///
/// # Examples
///
/// ```no_run
/// use broadphase_gpu::{GpuBoxPairs, GpuContext};
/// use broadphase_storage::Aabb;
/// use glam::Vec3;
///
/// let boxes = [
///     Aabb { min: Vec3::ZERO, max: Vec3::ONE },
///     Aabb { min: Vec3::splat(5.0), max: Vec3::splat(6.0) },
///     Aabb { min: Vec3::ONE, max: Vec3::splat(2.0) }, // touches box 0 at a corner
/// ];
/// let mut gpu = GpuBoxPairs::new(&GpuContext::new()?);
/// let mut pairs = Vec::new();
/// gpu.find_pairs(&boxes, &mut pairs)?;
/// assert_eq!(pairs, [[0, 2]]);
/// # Ok::<(), broadphase_gpu::GpuError>(())
/// ```
#[derive(Debug)]
pub struct GpuBoxPairs {
    search: GpuNeighborSearch,
}

impl GpuBoxPairs {
    /// Box pairs on `context`'s device; compiles its shaders now.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// let gpu = broadphase_gpu::GpuBoxPairs::new(&context);
    /// assert!(gpu.max_boxes() > 0);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn new(context: &GpuContext) -> Self {
        Self::with_config(context, GpuSearchConfig::default())
    }

    /// Box pairs with `config` (its `max_points` bounds the boxes).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuBoxPairs, GpuContext, GpuSearchConfig};
    /// let context = GpuContext::new()?;
    /// let gpu = GpuBoxPairs::with_config(&context, GpuSearchConfig { max_points: 10 });
    /// assert_eq!(gpu.max_boxes(), 10);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn with_config(context: &GpuContext, config: GpuSearchConfig) -> Self {
        Self { search: GpuNeighborSearch::with_config(context, config) }
    }

    /// The most boxes one call accepts (as
    /// [`GpuNeighborSearch::max_points`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// assert!(broadphase_gpu::GpuBoxPairs::new(&context).max_boxes() <= 65_535 * 256);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn max_boxes(&self) -> usize {
        self.search.max_points()
    }

    /// Device buffers created so far (see
    /// [`GpuNeighborSearch::buffer_allocations`]): a warm call adds none.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// assert!(broadphase_gpu::GpuBoxPairs::new(&context).buffer_allocations() > 0);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn buffer_allocations(&self) -> u64 {
        self.search.buffer_allocations()
    }

    /// Where the last call that reached the device spent its time (see
    /// [`GpuTimings`]; the read-back includes turning rows into pairs).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuBoxPairs, GpuContext};
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let mut gpu = GpuBoxPairs::new(&GpuContext::new()?);
    /// let boxes = [Aabb { min: Vec3::ZERO, max: Vec3::ONE }; 2];
    /// let mut pairs = Vec::new();
    /// gpu.find_pairs(&boxes, &mut pairs)?;
    /// let t = gpu.timings();
    /// assert!(t.upload + t.passes + t.readback > std::time::Duration::ZERO);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn timings(&self) -> GpuTimings {
        self.search.timings()
    }

    /// Replaces `out` with every overlapping pair once, `[a, b]` with
    /// `a < b`, sorted.
    ///
    /// # Errors
    ///
    /// [`GpuError::Input`] naming the first non-finite or inverted box, or
    /// for more than [`max_boxes`](Self::max_boxes) boxes;
    /// [`GpuError::TooManyNeighbors`] when the pairs outgrow one device
    /// buffer; device failures. `out` is then left untouched.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuBoxPairs, GpuContext, GpuError};
    /// use broadphase_storage::{Aabb, InputError};
    /// use glam::Vec3;
    /// let mut gpu = GpuBoxPairs::new(&GpuContext::new()?);
    /// let inverted = [Aabb { min: Vec3::ONE, max: Vec3::ZERO }];
    /// let mut pairs = Vec::new();
    /// let refused = gpu.find_pairs(&inverted, &mut pairs);
    /// assert!(matches!(refused, Err(GpuError::Input(InputError::Inverted { index: 0, .. }))));
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn find_pairs(&mut self, boxes: &[Aabb], out: &mut Vec<[u32; 2]>) -> Result<(), GpuError> {
        let clock = CallClock::start();
        let Some((lo, hi, widest)) = validate_boxes(boxes, self.max_boxes())? else {
            out.clear();
            return Ok(());
        };
        let params = plan_boxes(boxes.len(), lo, hi, widest, self.search.max_cells());
        self.search.rows(clock, params, Items::Boxes(boxes), Walk::Boxes, |offsets, entries| {
            pairs_of_rows(offsets, entries, out);
        })
    }
}

/// Replaces `out` with the pairs `[a, b]` of CSR rows that each hold the
/// partners of a higher index of item `a`, ascending: sorted pairs.
pub(crate) fn pairs_of_rows(offsets: &[u32], entries: &[u32], out: &mut Vec<[u32; 2]>) {
    out.clear();
    for (a, row) in offsets.windows(2).enumerate() {
        let partners = &entries[row[0] as usize..row[1] as usize];
        // Ids fit u32: at most max_points of them.
        out.extend(partners.iter().map(|&b| [a as u32, b]));
    }
}
