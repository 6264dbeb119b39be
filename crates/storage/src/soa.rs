//! Structure-of-arrays box storage, 64-byte aligned and padded for 16-wide
//! SIMD loads.

use crate::Aabb;
use glam::Vec3;

/// The widest SIMD width used, in `f32` lanes (AVX-512: 16 × 32 bits).
///
/// [`SoaBoxes::pad_to_lanes`] pads to a multiple of this, so a kernel may
/// load full vectors of any width up to 16 lanes without a scalar tail.
pub const LANES: usize = 16;

/// The id of a padding slot in [`SoaBoxes`]: `u32::MAX`, never a real box id
/// (see [`MAX_BOXES`](crate::MAX_BOXES)).
pub const SENTINEL_ID: u32 = u32::MAX;

/// One 64-byte, 64-byte-aligned block of [`LANES`] floats: a cache line and
/// one AVX-512 register.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
struct Chunk([f32; LANES]);

// The slice cast in `AlignedF32` relies on chunks being exactly LANES floats
// with no padding, laid end to end, each starting on a 64-byte boundary.
const _: () = {
    assert!(size_of::<Chunk>() == LANES * size_of::<f32>());
    assert!(size_of::<Chunk>() == 64);
    assert!(align_of::<Chunk>() == 64);
};

const ZERO_CHUNK: Chunk = Chunk([0.0; LANES]);

/// A growable `f32` buffer whose storage starts on a 64-byte boundary.
///
/// `as_slice().as_ptr()` is always 64-byte aligned, so element `i * LANES`
/// starts a cache line and an aligned AVX-512 load. Storage grows in whole
/// 16-float chunks, amortised; [`clear`](AlignedF32::clear) keeps it, so a
/// warm buffer refilled to the same length allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_storage::AlignedF32;
///
/// let mut xs = AlignedF32::new();
/// xs.push(1.0);
/// xs.resize(4, 0.5);
/// assert_eq!(xs.as_slice(), &[1.0, 0.5, 0.5, 0.5]);
/// assert_eq!(xs.as_slice().as_ptr() as usize % 64, 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct AlignedF32 {
    /// Invariant: `len <= chunks.len() * LANES`. Every float in `chunks` is
    /// initialised (chunks are created zeroed), including those past `len`.
    chunks: Vec<Chunk>,
    len: usize,
}

impl AlignedF32 {
    /// An empty buffer; allocates nothing until something is pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// let xs = broadphase_storage::AlignedF32::new();
    /// assert!(xs.is_empty());
    /// ```
    #[inline]
    pub const fn new() -> Self {
        Self { chunks: Vec::new(), len: 0 }
    }

    /// The number of floats stored.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.resize(3, 0.0);
    /// assert_eq!(xs.len(), 3);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no float is stored.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(broadphase_storage::AlignedF32::new().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many floats fit without allocating (a multiple of [`LANES`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.push(1.0);
    /// assert_eq!(xs.capacity() % broadphase_storage::LANES, 0);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.chunks.capacity() * LANES
    }

    /// Makes room for at least `additional` more floats.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.reserve(40);
    /// assert!(xs.capacity() >= 40);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.chunks.reserve(self.chunks_to_add(additional));
    }

    /// Chunks to add for room for `additional` more floats.
    fn chunks_to_add(&self, additional: usize) -> usize {
        let needed = self.len.checked_add(additional).expect("AlignedF32: length overflows usize");
        needed.div_ceil(LANES).saturating_sub(self.chunks.len())
    }

    /// Makes room for `additional` more floats with no amortised slack
    /// (rounded up to whole 16-float chunks).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.reserve_exact(40);
    /// assert_eq!(xs.capacity(), 48);
    /// ```
    pub fn reserve_exact(&mut self, additional: usize) {
        self.chunks.reserve_exact(self.chunks_to_add(additional));
    }

    /// Empties the buffer in O(1); storage is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.resize(100, 1.0);
    /// xs.clear();
    /// assert!(xs.is_empty() && xs.capacity() >= 100);
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends one float.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.push(2.5);
    /// assert_eq!(xs.as_slice(), &[2.5]);
    /// ```
    #[inline]
    pub fn push(&mut self, v: f32) {
        if self.len == self.chunks.len() * LANES {
            self.chunks.push(ZERO_CHUNK);
        }
        self.chunks[self.len / LANES].0[self.len % LANES] = v;
        self.len += 1;
    }

    /// Sets the length to `len`: shortens, or appends copies of `fill`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.resize(3, 1.0);
    /// xs.resize(1, 9.0);
    /// xs.resize(2, 4.0);
    /// assert_eq!(xs.as_slice(), &[1.0, 4.0]);
    /// ```
    pub fn resize(&mut self, len: usize, fill: f32) {
        let old = self.len;
        let chunks = len.div_ceil(LANES);
        if chunks > self.chunks.len() {
            self.chunks.resize(chunks, ZERO_CHUNK);
        }
        self.len = len;
        if len > old {
            self.as_mut_slice()[old..].fill(fill);
        }
    }

    /// The floats; the slice starts on a 64-byte boundary.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.resize(20, 0.0);
    /// assert_eq!(xs.as_slice().len(), 20);
    /// assert_eq!(xs.as_slice().as_ptr().align_offset(64), 0);
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: `Chunk` is `repr(C)` around `[f32; LANES]` with no padding
        // (asserted at compile time), so `chunks` is `chunks.len() * LANES`
        // contiguous, initialised `f32`s; `len` never exceeds that. The
        // pointer is non-null and 64-byte aligned (a `Vec<Chunk>`'s dangling
        // pointer too, when empty), which satisfies `f32`'s alignment. The
        // borrow of `self` keeps the storage alive and unaliased by writes.
        unsafe { core::slice::from_raw_parts(self.chunks.as_ptr().cast::<f32>(), self.len) }
    }

    /// The floats, mutable; the slice starts on a 64-byte boundary.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedF32::new();
    /// xs.resize(3, 0.0);
    /// xs.as_mut_slice()[1] = 7.0;
    /// assert_eq!(xs.as_slice(), &[0.0, 7.0, 0.0]);
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: as in `as_slice`; the pointer comes from `as_mut_ptr` and
        // the exclusive borrow of `self` makes the slice the only access.
        unsafe { core::slice::from_raw_parts_mut(self.chunks.as_mut_ptr().cast::<f32>(), self.len) }
    }
}

/// Boxes as seven parallel arrays — `min_x, min_y, min_z, max_x, max_y,
/// max_z` (each an [`AlignedF32`]) and `ids` — padded for SIMD.
///
/// Call [`pad_to_lanes`](SoaBoxes::pad_to_lanes) after the last
/// [`push`](SoaBoxes::push) so [`len`](SoaBoxes::len) is a multiple of
/// [`LANES`]. A padding slot has `min = +inf`, `max = -inf` on every axis and
/// id [`SENTINEL_ID`], so the inclusive overlap test
/// `a.min <= b.max && b.min <= a.max` is false between a sentinel and any box
/// with finite coordinates (the input contract), and between two sentinels —
/// no NaN involved, so no special case in a kernel.
///
/// [`clear`](SoaBoxes::clear) is O(1) and keeps storage, so a warm buffer
/// refilled with as many boxes allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Aabb, LANES, SENTINEL_ID, SoaBoxes};
/// use glam::Vec3;
///
/// let mut soa = SoaBoxes::new();
/// soa.push(3, &Aabb::new(Vec3::ZERO, Vec3::ONE));
/// soa.pad_to_lanes();
/// assert_eq!(soa.len(), LANES);
/// assert_eq!(soa.min(0)[0], 0.0);
/// assert_eq!(soa.ids()[..2], [3, SENTINEL_ID]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct SoaBoxes {
    /// Invariant: all seven arrays have the same length.
    min: [AlignedF32; 3],
    max: [AlignedF32; 3],
    ids: Vec<u32>,
}

impl SoaBoxes {
    /// An empty buffer; allocates nothing until a box is pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(broadphase_storage::SoaBoxes::new().is_empty());
    /// ```
    #[inline]
    pub const fn new() -> Self {
        const E: AlignedF32 = AlignedF32::new();
        Self { min: [E; 3], max: [E; 3], ids: Vec::new() }
    }

    /// Empties the buffer in O(1); storage is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// let mut soa = SoaBoxes::new();
    /// soa.push(0, &Aabb::default());
    /// soa.clear();
    /// assert_eq!(soa.len(), 0);
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.min.iter_mut().chain(&mut self.max).for_each(AlignedF32::clear);
        self.ids.clear();
    }

    /// Makes room for at least `additional` more slots in every array.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut soa = broadphase_storage::SoaBoxes::new();
    /// soa.reserve(1000);
    /// assert!(soa.capacity() >= 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.min.iter_mut().chain(&mut self.max).for_each(|a| a.reserve(additional));
        self.ids.reserve(additional);
    }

    /// Makes room for `additional` more slots in every array, with no
    /// amortised slack.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut soa = broadphase_storage::SoaBoxes::new();
    /// soa.reserve_exact(1000);
    /// assert!(soa.capacity() >= 1000);
    /// ```
    pub fn reserve_exact(&mut self, additional: usize) {
        self.min.iter_mut().chain(&mut self.max).for_each(|a| a.reserve_exact(additional));
        self.ids.reserve_exact(additional);
    }

    /// How many slots fit in every array without allocating.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(broadphase_storage::SoaBoxes::new().capacity(), 0);
    /// ```
    pub fn capacity(&self) -> usize {
        let floats = self.min.iter().chain(&self.max).map(AlignedF32::capacity);
        floats.fold(self.ids.capacity(), usize::min)
    }

    /// The number of slots, padding included.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// let mut soa = SoaBoxes::new();
    /// soa.push(0, &Aabb::default());
    /// assert_eq!(soa.len(), 1);
    /// soa.pad_to_lanes();
    /// assert_eq!(soa.len(), broadphase_storage::LANES);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no slots at all.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut soa = broadphase_storage::SoaBoxes::new();
    /// soa.pad_to_lanes(); // zero is already a multiple of LANES
    /// assert!(soa.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Appends box `b` with id `id`.
    ///
    /// `id` must not be [`SENTINEL_ID`] (checked in debug builds); `b` should
    /// satisfy the input contract ([`validate_boxes`](crate::validate_boxes)).
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// use glam::Vec3;
    /// let mut soa = SoaBoxes::new();
    /// soa.push(42, &Aabb::new(Vec3::new(1.0, 2.0, 3.0), Vec3::splat(4.0)));
    /// assert_eq!((soa.ids()[0], soa.min(2)[0], soa.max(0)[0]), (42, 3.0, 4.0));
    /// ```
    #[inline]
    pub fn push(&mut self, id: u32, b: &Aabb) {
        debug_assert_ne!(id, SENTINEL_ID, "SoaBoxes::push: u32::MAX is the padding id");
        self.push_slot(id, b.min, b.max);
    }

    #[inline]
    fn push_slot(&mut self, id: u32, min: Vec3, max: Vec3) {
        for axis in 0..3 {
            self.min[axis].push(min[axis]);
            self.max[axis].push(max[axis]);
        }
        self.ids.push(id);
    }

    /// Appends sentinel slots until [`len`](SoaBoxes::len) is a multiple of
    /// [`LANES`] (nothing if it already is).
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes, SENTINEL_ID};
    /// let mut soa = SoaBoxes::new();
    /// soa.push(0, &Aabb::default());
    /// soa.pad_to_lanes();
    /// let (id, pad) = soa.get(1);
    /// assert_eq!(id, SENTINEL_ID);
    /// assert!(!pad.overlaps(&Aabb::default()));
    /// ```
    pub fn pad_to_lanes(&mut self) {
        while !self.len().is_multiple_of(LANES) {
            self.push_slot(SENTINEL_ID, Vec3::INFINITY, Vec3::NEG_INFINITY);
        }
    }

    /// Appends a group of boxes as one padded block, the fast way to fill a
    /// leaf: every column grows once, then each slot is written in place.
    /// Returns the first slot of the group; the group's slots are a multiple
    /// of [`LANES`] long, sentinels after the boxes.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, LANES, SoaBoxes, SENTINEL_ID};
    /// use glam::Vec3;
    /// let mut soa = SoaBoxes::new();
    /// let unit = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// assert_eq!(soa.push_group([(7, unit), (8, unit)]), 0);
    /// assert_eq!(soa.push_group([(9, unit)]), LANES);
    /// assert_eq!(soa.ids()[..3], [7, 8, SENTINEL_ID]);
    /// assert_eq!(soa.ids()[LANES], 9);
    /// ```
    pub fn push_group<I>(&mut self, group: I) -> usize
    where
        I: IntoIterator<Item = (u32, Aabb)>,
        I::IntoIter: ExactSizeIterator,
    {
        let group = group.into_iter();
        let start = self.len();
        let end = start + group.len().next_multiple_of(LANES);
        for axis in 0..3 {
            self.min[axis].resize(end, f32::INFINITY);
            self.max[axis].resize(end, f32::NEG_INFINITY);
        }
        self.ids.resize(end, SENTINEL_ID);
        let [min_x, min_y, min_z] = self.min.each_mut().map(|c| &mut c.as_mut_slice()[start..end]);
        let [max_x, max_y, max_z] = self.max.each_mut().map(|c| &mut c.as_mut_slice()[start..end]);
        let ids = &mut self.ids[start..end];
        for (slot, (id, b)) in group.enumerate() {
            debug_assert_ne!(id, SENTINEL_ID, "SoaBoxes::push_group: u32::MAX is the padding id");
            ids[slot] = id;
            (min_x[slot], min_y[slot], min_z[slot]) = (b.min.x, b.min.y, b.min.z);
            (max_x[slot], max_y[slot], max_z[slot]) = (b.max.x, b.max.y, b.max.z);
        }
        start
    }

    /// The minimum coordinates on `axis` (0 = x, 1 = y, 2 = z), one per slot;
    /// 64-byte aligned.
    ///
    /// # Panics
    ///
    /// If `axis > 2`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// use glam::Vec3;
    /// let mut soa = SoaBoxes::new();
    /// soa.push(0, &Aabb::new(Vec3::new(1.0, 2.0, 3.0), Vec3::splat(5.0)));
    /// assert_eq!(soa.min(1), &[2.0]);
    /// ```
    #[inline]
    pub fn min(&self, axis: usize) -> &[f32] {
        self.min[axis].as_slice()
    }

    /// The maximum coordinates on `axis` (0 = x, 1 = y, 2 = z), one per slot;
    /// 64-byte aligned.
    ///
    /// # Panics
    ///
    /// If `axis > 2`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// use glam::Vec3;
    /// let mut soa = SoaBoxes::new();
    /// soa.push(0, &Aabb::new(Vec3::ZERO, Vec3::new(4.0, 5.0, 6.0)));
    /// assert_eq!(soa.max(2), &[6.0]);
    /// ```
    #[inline]
    pub fn max(&self, axis: usize) -> &[f32] {
        self.max[axis].as_slice()
    }

    /// The id of every slot ([`SENTINEL_ID`] for padding).
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// let mut soa = SoaBoxes::new();
    /// soa.push(5, &Aabb::default());
    /// soa.push(9, &Aabb::default());
    /// assert_eq!(soa.ids(), &[5, 9]);
    /// ```
    #[inline]
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The id and box in `slot`.
    ///
    /// # Panics
    ///
    /// If `slot >= self.len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, SoaBoxes};
    /// use glam::Vec3;
    /// let b = Aabb::new(Vec3::splat(-1.0), Vec3::ONE);
    /// let mut soa = SoaBoxes::new();
    /// soa.push(7, &b);
    /// assert_eq!(soa.get(0), (7, b));
    /// ```
    pub fn get(&self, slot: usize) -> (u32, Aabb) {
        let corner = |a: &[AlignedF32; 3]| {
            Vec3::new(a[0].as_slice()[slot], a[1].as_slice()[slot], a[2].as_slice()[slot])
        };
        (self.ids[slot], Aabb::new(corner(&self.min), corner(&self.max)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::alloc_count::allocations_in;

    fn aligned(s: &[f32]) -> bool {
        (s.as_ptr() as usize).is_multiple_of(64)
    }

    #[test]
    fn aligned_f32_push_resize_clear_round_trip() {
        let mut xs = AlignedF32::new();
        xs.reserve(3);
        assert!(xs.capacity() >= 3);
        assert!(aligned(xs.as_slice()) && aligned(xs.as_mut_slice()));
        let expected: Vec<f32> = (0..100).map(|i| i as f32).collect();
        for &v in &expected {
            xs.push(v);
            assert!(aligned(xs.as_slice()));
        }
        assert_eq!(xs.as_slice(), &expected[..]);
        assert_eq!(xs.len(), 100);
        xs.resize(37, 0.0);
        assert_eq!(xs.as_slice(), &expected[..37]);
        xs.resize(50, -2.0);
        assert_eq!(&xs.as_slice()[..37], &expected[..37]);
        assert!(xs.as_slice()[37..].iter().all(|&v| v == -2.0), "stale data after regrow");
        xs.as_mut_slice()[49] = 8.0;
        assert_eq!(xs.as_slice()[49], 8.0);
        let cap = xs.capacity();
        xs.clear();
        assert!(xs.is_empty() && xs.as_slice().is_empty());
        assert_eq!(xs.capacity(), cap);
        xs.push(1.0);
        assert_eq!(xs.as_slice(), &[1.0]);
    }

    #[test]
    fn aligned_f32_every_lane_block_is_aligned() {
        let mut xs = AlignedF32::new();
        xs.resize(1000, 1.0);
        for block in xs.as_slice().chunks(LANES) {
            assert!(aligned(block));
        }
    }

    #[test]
    fn aligned_f32_warm_refill_allocates_nothing() {
        let mut xs = AlignedF32::new();
        let fill = |xs: &mut AlignedF32| {
            xs.clear();
            (0..777).for_each(|i| xs.push(i as f32));
            xs.resize(900, 0.0);
        };
        fill(&mut xs);
        assert_eq!(allocations_in(|| fill(&mut xs)), 0);
    }

    fn sample(i: u32) -> Aabb {
        let c = Vec3::new(i as f32, -(i as f32), 0.5 * i as f32);
        Aabb::from_center_half_extent(c, Vec3::new(1.0, 2.0, 3.0))
    }

    #[test]
    fn soa_push_get_round_trip_and_padding() {
        let mut soa = SoaBoxes::new();
        for n in [0usize, 1, 15, 16, 17, 40] {
            soa.clear();
            for i in 0..n as u32 {
                soa.push(i * 3, &sample(i));
            }
            assert_eq!(soa.len(), n);
            soa.pad_to_lanes();
            assert_eq!(soa.len(), n.div_ceil(LANES) * LANES);
            for axis in 0..3 {
                assert_eq!(soa.min(axis).len(), soa.len());
                assert_eq!(soa.max(axis).len(), soa.len());
                assert!(aligned(soa.min(axis)) && aligned(soa.max(axis)));
            }
            for slot in 0..soa.len() {
                let (id, b) = soa.get(slot);
                if slot < n {
                    assert_eq!((id, b), (slot as u32 * 3, sample(slot as u32)));
                    assert_eq!(soa.min(1)[slot], b.min.y);
                    assert_eq!(soa.max(2)[slot], b.max.z);
                } else {
                    assert_eq!(id, SENTINEL_ID);
                    assert_eq!(b.min, Vec3::INFINITY);
                    assert_eq!(b.max, Vec3::NEG_INFINITY);
                }
            }
        }
    }

    #[test]
    fn sentinel_overlaps_nothing_finite_nor_itself() {
        let mut soa = SoaBoxes::new();
        soa.push(0, &Aabb::new(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX)));
        soa.push(1, &Aabb::new(Vec3::ZERO, Vec3::ZERO));
        soa.pad_to_lanes();
        let overlap = |a: usize, b: usize| {
            (0..3).all(|k| soa.min(k)[a] <= soa.max(k)[b] && soa.min(k)[b] <= soa.max(k)[a])
        };
        assert!(overlap(0, 1), "real boxes must still overlap");
        for s in 2..soa.len() {
            for other in 0..soa.len() {
                assert!(!overlap(s, other) && !overlap(other, s), "slot {s} vs {other}");
            }
            assert!((0..3).all(|k| !soa.min(k)[s].is_nan() && !soa.max(k)[s].is_nan()));
        }
    }

    #[test]
    fn soa_warm_refill_allocates_nothing() {
        let mut soa = SoaBoxes::new();
        let fill = |soa: &mut SoaBoxes| {
            soa.clear();
            (0..1000).for_each(|i| soa.push(i, &sample(i)));
            soa.pad_to_lanes();
        };
        fill(&mut soa);
        let cap = soa.capacity();
        assert_eq!(allocations_in(|| fill(&mut soa)), 0);
        assert_eq!(soa.capacity(), cap);
        assert!(cap >= soa.len());
    }

    #[test]
    #[should_panic]
    fn axis_out_of_range_panics() {
        let _ = SoaBoxes::new().min(3);
    }
}
