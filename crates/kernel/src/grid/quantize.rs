//! Boxes as 16-bit integers over the span where the input's boxes lie.
//!
//! Every box is quantized once, when a build starts, and travels down the
//! hierarchy as a 16-byte [`Item`]. A cell at depth `d` is the top `2d` bits of a
//! quantized coordinate on each axis (4 cells per axis per level, 8 levels),
//! so which cells a box reaches and which leaf reports a pair are the same
//! integer arithmetic and agree by construction.
//!
//! Quantization is only a filter. It is monotone (`x <= y` implies
//! `q(x) <= q(y)`): subtraction and multiplication round to nearest, which
//! never reverses an order, and the clamp and truncation keep it. So two
//! boxes that overlap in `f32` overlap as integers too, and every integer
//! candidate is decided by the exact `f32` test. Coordinates outside the
//! span clamp to its border, which keeps all of this true.

use super::config::PairKernel;
use super::cpu::Kernel;
use broadphase_storage::{Aabb, InputError, MAX_BOXES, validate_boxes};

/// Past this distance from the quantizer's origin, `x - origin` overflows
/// in `f32` and the point clamps to the last coordinate, whatever the
/// scale (a little short of `f32::MAX`, for the rounding).
pub(crate) const OVERFLOW: f64 = f32::MAX as f64 * (1.0 - 1.0 / 1024.0);

/// Levels of 4×4×4 cells below the root: 16 bits, 2 per level.
pub(crate) const LEVELS: u32 = 8;

/// One box as the build carries it: quantized bounds and the input index,
/// 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct Item {
    pub(crate) lo: [u16; 3],
    pub(crate) hi: [u16; 3],
    pub(crate) id: u32,
}

// The SIMD count pass loads an item as one 128-bit vector: lo in lanes 0..3,
// hi in lanes 3..6 (16-bit lanes), the id in the top 32 bits.
const _: () = assert!(size_of::<Item>() == 16 && align_of::<Item>() == 16);

/// The union of a run of boxes and whether they all meet the input
/// contract, in one pass; runs merge in any order.
///
/// The check is three compares per box: `min <= max` on every axis is
/// false for a NaN, and an infinite coordinate shows in the union. Only a
/// failing input pays for [`validate_boxes`], which names the box.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, parts::Bounds};
/// use glam::Vec3;
/// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::ONE, Vec3::splat(5.0))];
/// assert!(Bounds::of(&boxes).is_valid());
/// assert!(!Bounds::of(&[Aabb::new(Vec3::ONE, Vec3::ZERO)]).is_valid());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    lo: [f32; 3],
    hi: [f32; 3],
    ordered: bool,
}

impl Bounds {
    /// No box.
    pub const EMPTY: Bounds =
        Bounds { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3], ordered: true };

    /// The bounds of `boxes`.
    pub fn of(boxes: &[Aabb]) -> Bounds {
        let Bounds { mut lo, mut hi, mut ordered } = Bounds::EMPTY;
        for b in boxes {
            for axis in 0..3 {
                ordered &= b.min[axis] <= b.max[axis];
                // Plain compares, not f32::min/max: these compile to single
                // minss/maxss (NaN is caught by `ordered`).
                lo[axis] = if b.min[axis] < lo[axis] { b.min[axis] } else { lo[axis] };
                hi[axis] = if b.max[axis] > hi[axis] { b.max[axis] } else { hi[axis] };
            }
        }
        Bounds { lo, hi, ordered }
    }

    /// The bounds of both runs.
    #[must_use]
    pub fn merge(self, other: Bounds) -> Bounds {
        Bounds {
            lo: core::array::from_fn(|a| {
                if other.lo[a] < self.lo[a] { other.lo[a] } else { self.lo[a] }
            }),
            hi: core::array::from_fn(|a| {
                if other.hi[a] > self.hi[a] { other.hi[a] } else { self.hi[a] }
            }),
            ordered: self.ordered && other.ordered,
        }
    }

    /// Whether every box seen was finite with `min <= max`.
    pub fn is_valid(&self) -> bool {
        let empty = self.lo[0] > self.hi[0] && self.lo[0] == f32::INFINITY;
        self.ordered && (empty || self.lo.iter().chain(&self.hi).all(|x| x.is_finite()))
    }
}

/// The map from `f32` coordinates to 16-bit ones for one frame: 65536
/// steps over the widest axis of where the frame's boxes lie (the bounds,
/// narrowed past a few far boxes; those clamp to the border), the same
/// step on every axis. Monotone, so only a filter: two boxes that overlap
/// in `f32` overlap as integers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantizer {
    origin: [f32; 3],
    scale: [f32; 3],
}

impl Default for Quantizer {
    fn default() -> Self {
        Quantizer { origin: [0.0; 3], scale: [1.0; 3] }
    }
}

impl Quantizer {
    /// The quantizer whose 65536 steps span the union of `boxes`,
    /// checking the input contract in the same pass.
    pub(crate) fn covering(boxes: &[Aabb]) -> Result<Self, InputError> {
        Quantizer::new(&Bounds::of(boxes), boxes)
    }

    /// The quantizer for `boxes`, given their [`Bounds`] (merged from
    /// chunks, in any order): its 65536 steps span the bounds' widest axis,
    /// narrowed to where the bulk of the boxes lies when a few lie far
    /// outside it (found from a fixed sample of 256 of `boxes`).
    ///
    /// The extent is taken in `f64` (two `f32` coordinates near ±3.4e38 are
    /// further apart than `f32` can say) and the scale kept finite and
    /// positive, so `q` never meets `0 × ∞` and never yields NaN.
    ///
    /// # Errors
    /// [`InputError`] naming the first bad box of `boxes` when the bounds
    /// saw one (only then is `boxes` read), or too many boxes.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, InputError, parts::{Bounds, Quantizer}};
    /// use glam::Vec3;
    /// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::ONE, Vec3::ZERO)];
    /// let (head, tail) = boxes.split_at(1);
    /// let bounds = Bounds::of(head).merge(Bounds::of(tail));
    /// assert!(matches!(Quantizer::new(&bounds, &boxes), Err(InputError::Inverted { index: 1, .. })));
    /// ```
    pub fn new(bounds: &Bounds, boxes: &[Aabb]) -> Result<Self, InputError> {
        if !bounds.is_valid() || boxes.len() > MAX_BOXES {
            validate_boxes(boxes)?;
            unreachable!("validate_boxes accepted input the fast check rejected");
        }
        if bounds.lo[0] > bounds.hi[0] {
            return Ok(Quantizer::default()); // no box
        }
        let (lo, hi) = bulk_span(bounds, boxes);
        // One scale for all three axes, set by the widest: cells stay
        // cubes in world space, as the boxes (mostly) are. Scaling each
        // axis to its own extent would make a thin axis (a slab world, a
        // floor) as finely cut as the wide ones, and every box would span
        // several cells along it.
        let widest =
            (0..3).map(|axis| f64::from(hi[axis]) - f64::from(lo[axis])).fold(0.0f64, f64::max);
        let scale = if widest > 0.0 {
            (65536.0 / widest).min(f64::from(f32::MAX)) as f32
        } else {
            f32::MAX
        };
        Ok(Quantizer { origin: lo, scale: [scale; 3] })
    }

    /// Writes every box of `boxes` as an item into `items` (at least as
    /// long), ids from `first_id`: chunk by chunk, a parallel caller
    /// quantizes a frame exactly as the grid does.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, PairKernel, parts::{Bounds, Item, Quantizer}};
    /// let boxes = [Aabb::default(); 4];
    /// let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes)?;
    /// let mut items = [Item::default(); 2];
    /// quantizer.quantize_chunk(&boxes[2..], 2, &mut items, PairKernel::Auto);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn quantize_chunk(
        &self,
        boxes: &[Aabb],
        first_id: u32,
        items: &mut [Item],
        kernel: PairKernel,
    ) {
        self.quantize(boxes, first_id, items, Kernel::resolve(kernel));
    }

    /// Writes every box as an item, ids from `first_id` (`items` at least
    /// as long as `boxes`).
    pub(crate) fn quantize(
        &self,
        boxes: &[Aabb],
        first_id: u32,
        items: &mut [Item],
        kernel: Kernel,
    ) {
        assert!(items.len() >= boxes.len());
        match kernel {
            #[cfg(simd)]
            // SAFETY: the token proves the CPU check passed.
            Kernel::Avx2(avx2) => unsafe { x86::quantize_avx2(avx2, self, boxes, first_id, items) },
            Kernel::Scalar => {
                for (offset, (item, b)) in items.iter_mut().zip(boxes).enumerate() {
                    *item = self.item(b, first_id + offset as u32);
                }
            }
        }
    }

    /// The quantized coordinate of `x` on `axis`: monotone, clamped to
    /// `0..=65535` (points outside the build's bounds land on the border).
    #[inline(always)]
    pub(crate) fn coord(&self, axis: usize, x: f32) -> u16 {
        // `x - origin` is finite or ±∞ and `scale` finite and positive, so
        // the product is never NaN; `as` saturates the rest.
        ((x - self.origin[axis]) * self.scale[axis]).clamp(0.0, 65535.0) as u16
    }

    /// The grid of coordinates in `f64` world units.
    pub(crate) fn world_steps(&self) -> WorldSteps {
        WorldSteps {
            zero: self.origin.map(f64::from),
            step: self.scale.map(|s| 1.0 / f64::from(s)),
            scale: self.scale.map(f64::from),
        }
    }

    /// A box as an item.
    #[inline(always)]
    pub(crate) fn item(&self, b: &Aabb, id: u32) -> Item {
        Item {
            lo: [self.coord(0, b.min.x), self.coord(1, b.min.y), self.coord(2, b.min.z)],
            hi: [self.coord(0, b.max.x), self.coord(1, b.max.y), self.coord(2, b.max.z)],
            id,
        }
    }
}

/// The quantizer's coordinates as world spans, in `f64`, for filters that
/// must never reject what an exact test on the boxes would accept.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldSteps {
    /// World position of coordinate 0 per axis.
    pub(crate) zero: [f64; 3],
    /// World length of one step per axis.
    pub(crate) step: [f64; 3],
    /// Steps per world unit per axis (the quantizer's scale).
    pub(crate) scale: [f64; 3],
}

impl WorldSteps {
    /// The coordinates on `axis` of every point whose offset from the
    /// quantizer's origin lies in `low..=high`, widened by `margin` steps
    /// on each side for rounding: the lowest and the highest. The quantizer
    /// subtracts in `f32`, where an offset past its range becomes +inf and
    /// clamps to the last coordinate; below the range it clamps to 0, as a
    /// negative offset does here.
    #[inline(always)]
    pub(crate) fn coords_of_offsets(
        &self,
        axis: usize,
        low: f64,
        high: f64,
        margin: f64,
    ) -> (u16, u16) {
        let scale = self.scale[axis];
        let high = if high > OVERFLOW { 65535.0 } else { high * scale + margin };
        ((low * scale - margin).clamp(0.0, 65535.0) as u16, high.clamp(0.0, 65535.0) as u16)
    }

    /// The world span on `axis` that holds every point the quantizer puts
    /// in coordinates `lo..=hi`: widened by a step on each side (the
    /// quantizer rounds in `f32`), and open on a side at the border of the
    /// coordinates (points beyond the build's bounds clamp into it, and so
    /// do points whose offset from the origin overflows `f32`).
    #[inline(always)]
    pub(crate) fn span(&self, axis: usize, lo: u32, hi: u32) -> (f64, f64) {
        let (zero, step) = (self.zero[axis], self.step[axis]);
        let mut min = if lo == 0 { f64::NEG_INFINITY } else { zero + (f64::from(lo) - 1.0) * step };
        let mut max = if hi >= 65535 { f64::INFINITY } else { zero + (f64::from(hi) + 2.0) * step };
        if hi >= 65535 {
            min = min.min(zero + OVERFLOW);
        }
        if lo == 0 {
            max = max.max(zero - OVERFLOW);
        }
        (min, max)
    }

    /// A world span on `axis` inside every box whose coordinates are
    /// `lo..=hi`, or `None` if they are too close to promise one. The low
    /// corner of such a box lies below `lo + 1` steps (a step more for the
    /// rounding), the high corner at or above `hi` (a step less), or, at
    /// the last coordinate, maybe only where the offset overflows `f32`.
    #[inline(always)]
    pub(crate) fn covered(&self, axis: usize, lo: u32, hi: u32) -> Option<(f64, f64)> {
        let (zero, step) = (self.zero[axis], self.step[axis]);
        let mut max = zero + (f64::from(hi) - 1.0) * step;
        if hi >= 65535 {
            max = max.min(zero + OVERFLOW);
        }
        (hi >= lo + 3).then(|| (zero + (f64::from(lo) + 2.0) * step, max))
    }
}

#[cfg(simd)]
mod x86 {
    use super::{Item, Quantizer};
    use crate::grid::cpu::Avx2Token;
    use broadphase_storage::Aabb;
    use std::arch::x86_64::*;

    // One 256-bit load reads a box's six floats and two of the next box's.
    const _: () = assert!(size_of::<Aabb>() == 24 && align_of::<Aabb>() == 4);

    /// [`Quantizer::item`] for every box: the same subtraction, product,
    /// clamp and truncation, lane by lane, so the items are identical.
    /// Compiled for AVX2, which the token proves; `items` at least as long
    /// as `boxes` (asserted).
    #[target_feature(enable = "avx2")]
    pub(super) fn quantize_avx2(
        _: Avx2Token,
        quantizer: &Quantizer,
        boxes: &[Aabb],
        first_id: u32,
        items: &mut [Item],
    ) {
        assert!(items.len() >= boxes.len());
        let [ox, oy, oz] = quantizer.origin;
        let [sx, sy, sz] = quantizer.scale;
        let origin = _mm256_setr_ps(ox, oy, oz, ox, oy, oz, 0.0, 0.0);
        let scale = _mm256_setr_ps(sx, sy, sz, sx, sy, sz, 0.0, 0.0);
        let (zero, top) = (_mm256_setzero_ps(), _mm256_set1_ps(65535.0));
        // The last box has no next box to read past; it goes the scalar way.
        let vector_boxes = boxes.len().saturating_sub(1);
        for (offset, (b, item)) in boxes[..vector_boxes].iter().zip(items.iter_mut()).enumerate() {
            let id = first_id + offset as u32;
            // SAFETY: `b` is not the last box, so the 8 floats from its
            // start lie inside `boxes` (24-byte boxes, 4-byte aligned:
            // unaligned load).
            let v = unsafe { _mm256_loadu_ps((b as *const Aabb).cast()) };
            let t = _mm256_mul_ps(_mm256_sub_ps(v, origin), scale);
            let q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(t, zero), top));
            // Six 16-bit coordinates (the clamp keeps them in range), then
            // the id in the top 32 bits.
            let packed =
                _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256::<1>(q));
            let packed = _mm_insert_epi32::<3>(packed, id as i32);
            // SAFETY: `Item` is 16 bytes, 16-byte aligned, all fields plain
            // integers in the layout just built.
            unsafe { _mm_store_si128((item as *mut Item).cast(), packed) };
        }
        for (offset, b) in boxes.iter().enumerate().skip(vector_boxes) {
            items[offset] = quantizer.item(b, first_id + offset as u32);
        }
    }
}

/// Boxes sampled, one from each equal run of indices, to find where the
/// bulk of an input lies.
const BULK_SAMPLE: usize = 256;

/// The span the 65536 steps cover: the input's bounds, narrowed to where
/// the bulk of the boxes lies when a few lie far outside it.
///
/// A handful of boxes far from the rest (three "teapots" at 9,000 beside a
/// cube of 700) would otherwise stretch the steps over empty space, and the
/// first split of every frame would only separate them. Per axis, this
/// drops the two most extreme of `BULK_SAMPLE` sampled boxes on each side
/// and widens what is left by an eighth on each side; the axis is narrowed
/// to that only if it takes at most half the bounds. Boxes outside the
/// span clamp to its border cells: still exact (quantization is only a
/// filter, and clamping keeps it monotone), only their candidates there are
/// decided by the `f32` test. The sample depends on the boxes alone, so the
/// span is the same for every caller and thread count.
fn bulk_span(bounds: &Bounds, boxes: &[Aabb]) -> ([f32; 3], [f32; 3]) {
    const DROPPED: usize = 2;
    if boxes.len() < 4 * BULK_SAMPLE {
        return (bounds.lo, bounds.hi);
    }
    let step = boxes.len() / BULK_SAMPLE;
    // One box from each run of `step`, at an offset that varies from run to
    // run (a fixed hash of the run's number), so input laid out with a
    // period cannot line the sample up on one kind of box.
    let sample = (0..BULK_SAMPLE).map(|k| {
        let jitter = (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        &boxes[k * step + (jitter as usize % step)]
    });
    let mut lo = bounds.lo;
    let mut hi = bounds.hi;
    for axis in 0..3 {
        // The DROPPED + 1 smallest lows and largest highs seen, in order.
        let mut lowest = [f32::INFINITY; DROPPED + 1];
        let mut highest = [f32::NEG_INFINITY; DROPPED + 1];
        for b in sample.clone() {
            let (mut low, mut high) = (b.min[axis], b.max[axis]);
            for k in 0..=DROPPED {
                if low < lowest[k] {
                    core::mem::swap(&mut low, &mut lowest[k]);
                }
                if high > highest[k] {
                    core::mem::swap(&mut high, &mut highest[k]);
                }
            }
        }
        let (bulk_lo, bulk_hi) = (f64::from(lowest[DROPPED]), f64::from(highest[DROPPED]));
        let margin = (bulk_hi - bulk_lo) / 8.0;
        let extent = f64::from(bounds.hi[axis]) - f64::from(bounds.lo[axis]);
        // Narrow only past real outliers: when the bulk, widened, takes at
        // most half the bounds, and has an extent (a sample of one repeated
        // box says nothing about the others).
        if bulk_hi > bulk_lo && (bulk_hi - bulk_lo) + 2.0 * margin <= extent / 2.0 {
            // Never wider than the bounds, and in f32 range.
            lo[axis] = lo[axis].max((bulk_lo - margin) as f32);
            hi[axis] = hi[axis].min((bulk_hi + margin) as f32);
        }
    }
    (lo, hi)
}

/// A cell of the grid's hierarchy: the top `2 * depth` bits of each quantized axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cell {
    pub(crate) prefix: [u16; 3],
    pub(crate) depth: u8,
}

impl Cell {
    /// The root: depth 0, all of the quantized cube.
    pub const ROOT: Cell = Cell { prefix: [0; 3], depth: 0 };

    /// How far a coordinate shifts right to give its cell at this depth.
    #[inline(always)]
    pub(crate) fn shift(self) -> u32 {
        16 - 2 * u32::from(self.depth)
    }

    /// The lowest and highest coordinate of the cell on `axis`.
    #[inline(always)]
    pub(crate) fn span(self, axis: usize) -> (u32, u32) {
        let lo = u32::from(self.prefix[axis]) << self.shift();
        (lo, lo + (1u32 << self.shift()) - 1)
    }

    /// Which axes of the cell contain the item's low corner, one bit per
    /// axis.
    ///
    /// A leaf reports a pair only if it holds the pair's reference point,
    /// the max of the two low corners. Both boxes reach the leaf, so that
    /// point is never above the cell; it is inside on an axis exactly when
    /// one of the two low corners is. The leaf reports the pair when
    /// `own(a) | own(b) == 0b111`: one OR per candidate instead of three
    /// max-shift-compares.
    #[inline(always)]
    pub(crate) fn owned_axes(self, lo: [u16; 3]) -> u8 {
        let shift = self.shift();
        let inside = |axis: usize| {
            // `>> 16` of a u16 widened to u32 is 0, the root's one prefix.
            u8::from((u32::from(lo[axis]) >> shift) == u32::from(self.prefix[axis]))
        };
        inside(0) | inside(1) << 1 | inside(2) << 2
    }
}

/// Every axis owned: the pair is this leaf's to report.
pub(crate) const OWNS_PAIR: u8 = 0b111;
