//! [`AlignedColumn`]: one structure-of-arrays column of plain numbers,
//! 64-byte aligned, grown in whole 64-byte blocks.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};

/// The widest SIMD width used, in 32-bit lanes (AVX-512: 16 × 32 bits).
///
/// Structures pad the runs they load as vectors (a leaf, a row of
/// particles) to, or by, this many slots, so a kernel loads full vectors of
/// any width up to 16 lanes without a scalar tail.
pub const LANES: usize = 16;

/// The id of a padding slot in an id column: `u32::MAX`, never a real box
/// id (see [`MAX_BOXES`](crate::MAX_BOXES)).
pub const SENTINEL_ID: u32 = u32::MAX;

/// Bytes per block: a cache line, one AVX-512 register.
const BLOCK: usize = 64;

/// One 64-byte, 64-byte-aligned block of a column's storage.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Chunk([u8; BLOCK]);

// The slice casts in `AlignedColumn` rely on chunks being exactly 64 bytes
// with no padding, laid end to end, each starting on a 64-byte boundary.
const _: () = {
    assert!(size_of::<Chunk>() == BLOCK);
    assert!(align_of::<Chunk>() == BLOCK);
};

const ZERO_CHUNK: Chunk = Chunk([0; BLOCK]);

mod sealed {
    /// Only the number types listed in this module are lanes.
    pub trait Sealed {
        /// Writes the value's bytes, native order, into `out` (exactly its
        /// size long).
        fn write_ne_bytes(self, out: &mut [u8]);
    }

    macro_rules! sealed {
        ($($t:ty),*) => {$(
            impl Sealed for $t {
                #[inline(always)]
                fn write_ne_bytes(self, out: &mut [u8]) {
                    out.copy_from_slice(&self.to_ne_bytes());
                }
            }
        )*};
    }
    sealed!(i16, u16, u32, f32);
}

/// A number type an [`AlignedColumn`] holds: `i16`, `u16`, `u32` or `f32`.
///
/// Sealed. A column stores its lanes in 64-byte blocks and reads them back
/// as a slice of this type, which is sound for exactly these types: no
/// padding bytes, every bit pattern (all zeros included) a valid value, a
/// size that divides 64 and an alignment below 64 (checked at compile
/// time below). That is all `bytemuck::Pod` would add; four types do not
/// need the dependency.
pub trait Lane: Copy + PartialEq + fmt::Debug + sealed::Sealed + 'static {}

impl Lane for i16 {}
impl Lane for u16 {}
impl Lane for u32 {}
impl Lane for f32 {}

/// Lanes of `T` per 64-byte block, with the layout facts the casts rely on.
const fn lanes_per_block<T: Lane>() -> usize {
    assert!(size_of::<T>() > 0 && BLOCK.is_multiple_of(size_of::<T>()));
    assert!(align_of::<T>() <= BLOCK && align_of::<T>() <= size_of::<T>());
    BLOCK / size_of::<T>()
}

const _: () = {
    assert!(lanes_per_block::<i16>() == 32);
    assert!(lanes_per_block::<u16>() == 32);
    assert!(lanes_per_block::<u32>() == LANES);
    assert!(lanes_per_block::<f32>() == LANES);
};

/// A growable column of `T` whose storage starts on a 64-byte boundary.
///
/// `as_ptr()` is always 64-byte aligned, so every 64 bytes of lanes from
/// the start begin a cache line and an aligned AVX-512 load. Storage grows
/// in whole 64-byte blocks (16 `f32`/`u32`, 32 `i16`/`u16`), amortised,
/// and every lane of a block is initialised (blocks are made zeroed), so a
/// block that holds the last element may be read whole.
/// [`clear`](AlignedColumn::clear) keeps the storage, so a warm column
/// refilled to the same length allocates nothing.
///
/// The column dereferences to a plain slice (`&[T]`, `&mut [T]`): kernels
/// read it like a `Vec<T>`, through the same pointer-and-length pair.
///
/// # Examples
///
/// ```
/// use broadphase_storage::AlignedColumn;
///
/// let mut xs = AlignedColumn::<f32>::new();
/// xs.push(1.0);
/// xs.resize(4, 0.5);
/// assert_eq!(xs[..], [1.0, 0.5, 0.5, 0.5]);
/// assert_eq!(xs.as_ptr() as usize % 64, 0);
///
/// let mut lo = AlignedColumn::<i16>::new();
/// lo.extend_from_slice(&[-3, 7]);
/// assert_eq!(lo.iter().max(), Some(&7));
/// ```
pub struct AlignedColumn<T: Lane> {
    /// Invariant: `len <= chunks.len() * lanes_per_block::<T>()`. Every
    /// byte in `chunks` is initialised, including those past `len`, and
    /// the lanes below `len` hold values written as `T` (or zeros).
    chunks: Vec<Chunk>,
    len: usize,
    lanes: PhantomData<T>,
}

impl<T: Lane> Clone for AlignedColumn<T> {
    fn clone(&self) -> Self {
        let mut copy = Self::new();
        copy.clone_from(self);
        copy
    }

    /// Copies `source`'s lanes into the column's own storage: no
    /// allocation when the column already has room for them (a copy
    /// taken every frame into the same column allocates nothing once
    /// warm).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::AlignedColumn;
    /// let mut source = AlignedColumn::<u32>::new();
    /// source.extend_from_slice(&[1, 2, 3]);
    /// let mut copy = AlignedColumn::new();
    /// copy.reserve(64);
    /// let room = copy.as_ptr();
    /// copy.clone_from(&source);
    /// assert_eq!(copy, source);
    /// assert_eq!(copy.as_ptr(), room); // its own storage, kept
    /// ```
    fn clone_from(&mut self, source: &Self) {
        self.clear();
        self.extend_from_slice(source.as_slice());
    }
}

impl<T: Lane> Default for AlignedColumn<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Lane> fmt::Debug for AlignedColumn<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Columns are equal when their elements are (capacity does not count).
impl<T: Lane> PartialEq for AlignedColumn<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Lane> AlignedColumn<T> {
    /// Lanes per 64-byte block.
    const PER_BLOCK: usize = lanes_per_block::<T>();

    /// An empty column; allocates nothing until something is appended.
    ///
    /// # Examples
    ///
    /// ```
    /// let xs = broadphase_storage::AlignedColumn::<u32>::new();
    /// assert!(xs.is_empty());
    /// ```
    #[inline]
    pub const fn new() -> Self {
        Self { chunks: Vec::new(), len: 0, lanes: PhantomData }
    }

    /// How many lanes fit without allocating (whole 64-byte blocks).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<f32>::new();
    /// xs.push(1.0);
    /// assert_eq!(xs.capacity() % broadphase_storage::LANES, 0);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.chunks.capacity() * Self::PER_BLOCK
    }

    /// Makes room for at least `additional` more lanes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<i16>::new();
    /// xs.reserve(40);
    /// assert!(xs.capacity() >= 40);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.chunks.reserve(self.chunks_to_add(additional));
    }

    /// Makes room for `additional` more lanes with no amortised slack
    /// (rounded up to whole 64-byte blocks), so columns reserved to the
    /// same room end up with the same capacity.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<f32>::new();
    /// xs.reserve_exact(40);
    /// assert_eq!(xs.capacity(), 48);
    /// ```
    pub fn reserve_exact(&mut self, additional: usize) {
        self.chunks.reserve_exact(self.chunks_to_add(additional));
    }

    /// Blocks to add for room for `additional` more lanes.
    fn chunks_to_add(&self, additional: usize) -> usize {
        let needed =
            self.len.checked_add(additional).expect("AlignedColumn: length overflows usize");
        needed.div_ceil(Self::PER_BLOCK).saturating_sub(self.chunks.len())
    }

    /// Makes the blocks hold at least `len` lanes (new blocks zeroed).
    #[inline]
    fn cover(&mut self, len: usize) {
        let chunks = len.div_ceil(Self::PER_BLOCK);
        if chunks > self.chunks.len() {
            // A large new allocation sits on huge pages (see `huge_pages`).
            crate::huge_pages::reserve_huge(&mut self.chunks, chunks);
            self.chunks.resize(chunks, ZERO_CHUNK);
        }
    }

    /// Empties the column in O(1); storage is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<u16>::new();
    /// xs.resize(100, 1);
    /// xs.clear();
    /// assert!(xs.is_empty() && xs.capacity() >= 100);
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Shortens the column to `len` lanes (nothing if it is not longer).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut ids = broadphase_storage::AlignedColumn::<u32>::new();
    /// ids.extend_from_slice(&[4, 5, 6]);
    /// ids.truncate(1);
    /// assert_eq!(ids[..], [4]);
    /// ```
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Appends one lane.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<f32>::new();
    /// xs.push(2.5);
    /// assert_eq!(xs[..], [2.5]);
    /// ```
    #[inline]
    pub fn push(&mut self, v: T) {
        let at = self.len;
        // The blocks are full exactly when the length reaches them (it
        // never passes them): one compare against a shifted count, not a
        // division, on the path a gather takes per lane.
        if at == self.chunks.len() * Self::PER_BLOCK {
            self.grow_one_block();
        }
        self.len = at + 1;
        self.as_mut_slice()[at] = v;
    }

    /// Appends one zeroed block (amortised growth of the storage).
    #[cold]
    #[inline(never)]
    fn grow_one_block(&mut self) {
        self.chunks.push(ZERO_CHUNK);
    }

    /// Sets the length to `len`: shortens, or appends copies of `fill`.
    ///
    /// A long run of copies is written as whole 64-byte blocks after the
    /// rest of the block holding the first (the block holding the new last
    /// lane is then filled to its end); a short one lane by lane.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<i16>::new();
    /// xs.resize(3, 1);
    /// xs.resize(1, 9);
    /// xs.resize(2, 4);
    /// assert_eq!(xs[..], [1, 4]);
    /// ```
    #[inline]
    pub fn resize(&mut self, len: usize, fill: T) {
        let old = self.len;
        if len <= old {
            self.len = len;
        } else if len - old >= Self::LONG_RUN {
            self.append_blocks(len, fill);
        } else {
            self.cover(len);
            self.len = len;
            self.as_mut_slice()[old..].fill(fill);
        }
    }

    /// Sets the length to `len` for a caller that then writes every lane
    /// below it: the lanes this column's blocks already hold keep whatever
    /// they held (an earlier, longer length's values, or zeros), and only
    /// blocks added to reach `len` are written (zeroed). A warm rebuild of
    /// a million lanes so skips a 4 MB fill that [`resize`](Self::resize)
    /// would write and the caller would overwrite.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<u32>::new();
    /// xs.extend_from_slice(&[7, 8, 9]);
    /// xs.clear();
    /// xs.resize_for_overwrite(2);
    /// assert_eq!(xs[..], [7, 8]); // the old lanes, to be overwritten
    /// xs.resize_for_overwrite(100);
    /// assert_eq!(xs.len(), 100);
    /// ```
    #[inline]
    pub fn resize_for_overwrite(&mut self, len: usize) {
        self.cover(len);
        self.len = len;
    }

    /// Appended runs at least this long are written in whole blocks.
    const LONG_RUN: usize = 4 * Self::PER_BLOCK;

    /// [`resize`](Self::resize) to a longer `len`, whole blocks at a time.
    fn append_blocks(&mut self, len: usize, fill: T) {
        let old = self.len;
        // Blocks `first_whole..blocks` are written whole; lanes `old..head`
        // (the rest of the block holding `old`) one at a time.
        let (first_whole, blocks) = (old.div_ceil(Self::PER_BLOCK), len.div_ceil(Self::PER_BLOCK));
        let head = (first_whole * Self::PER_BLOCK).min(len);
        let block = Self::block_of(fill);
        let kept = self.chunks.len().min(blocks);
        if first_whole < kept {
            self.chunks[first_whole..kept].fill(block);
        }
        if blocks > self.chunks.len() {
            crate::huge_pages::reserve_huge(&mut self.chunks, blocks);
            self.chunks.resize(blocks, block);
        }
        self.len = len;
        self.as_mut_slice()[old..head].fill(fill);
    }

    /// A block whose every lane is `fill`.
    #[inline]
    fn block_of(fill: T) -> Chunk {
        let mut block = ZERO_CHUNK;
        for lane in block.0.chunks_exact_mut(size_of::<T>()) {
            fill.write_ne_bytes(lane);
        }
        block
    }

    /// Appends a copy of `values`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut ids = broadphase_storage::AlignedColumn::<u32>::new();
    /// ids.push(1);
    /// ids.extend_from_slice(&[2, 3]);
    /// assert_eq!(ids[..], [1, 2, 3]);
    /// ```
    pub fn extend_from_slice(&mut self, values: &[T]) {
        let old = self.len;
        let len = old.checked_add(values.len()).expect("AlignedColumn: length overflows usize");
        self.cover(len);
        self.len = len;
        self.as_mut_slice()[old..].copy_from_slice(values);
    }

    /// The lanes; the slice starts on a 64-byte boundary.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<f32>::new();
    /// xs.resize(20, 0.0);
    /// assert_eq!(xs.as_slice().len(), 20);
    /// assert_eq!(xs.as_slice().as_ptr().align_offset(64), 0);
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `chunks` is `chunks.len() * 64` contiguous, initialised
        // bytes (`Chunk` is 64 bytes with no padding, asserted above);
        // `len` lanes of `T` never exceed them (`lanes_per_block` lanes per
        // chunk). `T` is a `Lane`: no padding, every bit pattern valid, so
        // those bytes are valid `T`s. The pointer is non-null and 64-byte
        // aligned (a `Vec<Chunk>`'s dangling pointer too, when empty),
        // which satisfies `T`'s alignment. The borrow of `self` keeps the
        // storage alive and unaliased by writes.
        unsafe { core::slice::from_raw_parts(self.chunks.as_ptr().cast::<T>(), self.len) }
    }

    /// The lanes, mutable; the slice starts on a 64-byte boundary.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut xs = broadphase_storage::AlignedColumn::<u16>::new();
    /// xs.resize(3, 0);
    /// xs.as_mut_slice()[1] = 7;
    /// assert_eq!(xs[..], [0, 7, 0]);
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; the pointer comes from `as_mut_ptr`, the
        // exclusive borrow of `self` makes the slice the only access, and
        // whatever `T`s are written through it leave the bytes initialised.
        unsafe { core::slice::from_raw_parts_mut(self.chunks.as_mut_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Lane> Deref for AlignedColumn<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Lane> DerefMut for AlignedColumn<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

/// Appends every lane of an iterator (room for its lower size bound made
/// first, then one lane at a time).
///
/// # Examples
///
/// ```
/// let mut ids = broadphase_storage::AlignedColumn::<u32>::new();
/// ids.extend((0..40u32).filter(|id| id % 2 == 1));
/// assert_eq!(ids.len(), 20);
/// assert_eq!(ids[19], 39);
/// ```
impl<T: Lane> Extend<T> for AlignedColumn<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, lanes: I) {
        let lanes = lanes.into_iter();
        self.reserve(lanes.size_hint().0);
        for lane in lanes {
            self.push(lane);
        }
    }
}

/// Iterates over the lanes, like `&Vec<T>`.
impl<'a, T: Lane> IntoIterator for &'a AlignedColumn<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterates over the lanes mutably, like `&mut Vec<T>`.
impl<'a, T: Lane> IntoIterator for &'a mut AlignedColumn<T> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::alloc_count::allocations_in;

    fn aligned<T>(s: &[T]) -> bool {
        (s.as_ptr() as usize).is_multiple_of(64)
    }

    /// Values of every lane type from a counter, distinct for `i < 1000`.
    trait Sample: Lane {
        fn sample(i: usize) -> Self;
    }
    impl Sample for i16 {
        fn sample(i: usize) -> Self {
            i as i16 - 500
        }
    }
    impl Sample for u16 {
        fn sample(i: usize) -> Self {
            i as u16 * 7
        }
    }
    impl Sample for u32 {
        fn sample(i: usize) -> Self {
            i as u32 * 65_537
        }
    }
    impl Sample for f32 {
        fn sample(i: usize) -> Self {
            i as f32 * 0.5 - 3.0
        }
    }

    fn push_resize_clear_round_trip<T: Sample>() {
        let mut xs = AlignedColumn::<T>::new();
        xs.reserve(3);
        assert!(xs.capacity() >= 3);
        assert!(aligned(xs.as_slice()) && aligned(xs.as_mut_slice()));
        let expected: Vec<T> = (0..100).map(T::sample).collect();
        for &v in &expected {
            xs.push(v);
            assert!(aligned(&xs));
        }
        assert_eq!(xs[..], expected[..]);
        assert_eq!(xs.len(), 100);
        xs.resize(37, T::sample(0));
        assert_eq!(xs[..], expected[..37]);
        xs.resize(50, T::sample(999));
        assert_eq!(xs[..37], expected[..37]);
        assert!(xs[37..].iter().all(|&v| v == T::sample(999)), "stale data after regrow");
        xs[49] = T::sample(8);
        assert_eq!(xs[49], T::sample(8));
        xs.truncate(60);
        assert_eq!(xs.len(), 50, "truncate never lengthens");
        xs.truncate(45);
        xs.extend_from_slice(&expected[..70]);
        assert_eq!(xs[45..], expected[..70]);
        let cap = xs.capacity();
        xs.clear();
        assert!(xs.is_empty() && xs.as_slice().is_empty());
        assert_eq!(xs.capacity(), cap);
        xs.push(T::sample(1));
        assert_eq!(xs[..], [T::sample(1)]);
        assert_eq!(xs.clone(), xs);
        assert_eq!(format!("{xs:?}"), format!("{:?}", [T::sample(1)]));
        for (lane, &v) in (&mut xs).into_iter().zip(&expected[..]) {
            *lane = v;
        }
        assert_eq!((&xs).into_iter().copied().collect::<Vec<_>>(), expected[..1]);
    }

    #[test]
    fn push_resize_clear_round_trip_every_lane_type() {
        push_resize_clear_round_trip::<i16>();
        push_resize_clear_round_trip::<u16>();
        push_resize_clear_round_trip::<u32>();
        push_resize_clear_round_trip::<f32>();
    }

    fn every_block_is_aligned<T: Sample>() {
        let mut xs = AlignedColumn::<T>::new();
        xs.resize(1000, T::sample(1));
        let per_block = 64 / size_of::<T>();
        for block in xs.chunks(per_block) {
            assert!(aligned(block));
        }
        assert_eq!(xs.capacity() % per_block, 0);
        // Lane runs of `LANES` start at least 32 bytes apart and aligned.
        for run in xs.chunks(LANES) {
            assert!((run.as_ptr() as usize).is_multiple_of(LANES * size_of::<T>()));
        }
    }

    #[test]
    fn every_block_is_aligned_every_lane_type() {
        every_block_is_aligned::<i16>();
        every_block_is_aligned::<u16>();
        every_block_is_aligned::<u32>();
        every_block_is_aligned::<f32>();
    }

    fn warm_refill_allocates_nothing<T: Sample>() {
        let mut xs = AlignedColumn::<T>::new();
        let values: Vec<T> = (0..300).map(T::sample).collect();
        let fill = |xs: &mut AlignedColumn<T>| {
            xs.clear();
            (0..777).for_each(|i| xs.push(T::sample(i)));
            xs.resize(900, T::sample(0));
            xs.extend_from_slice(&values);
            xs.extend((0..50).map(T::sample));
        };
        fill(&mut xs);
        let cap = xs.capacity();
        assert_eq!(allocations_in(|| fill(&mut xs)), 0);
        assert_eq!(xs.capacity(), cap);
    }

    #[test]
    fn clone_from_copies_into_a_warm_column_without_allocating() {
        let mut source = AlignedColumn::<i16>::new();
        source.extend((0..300).map(i16::sample));
        let mut copy = AlignedColumn::<i16>::new();
        copy.resize(500, 9); // longer before: the copy must shorten it
        assert_eq!(allocations_in(|| copy.clone_from(&source)), 0);
        assert_eq!(copy, source);
        assert!(aligned(&copy));
        source.truncate(40);
        assert_eq!(allocations_in(|| copy.clone_from(&source)), 0);
        assert_eq!(copy[..], source[..]);
        let fresh = source.clone();
        assert_eq!(fresh, source);
        assert!(aligned(&fresh));
    }

    #[test]
    fn extend_appends_in_order_across_blocks() {
        let mut ids = AlignedColumn::<u32>::new();
        ids.push(7);
        ids.extend((0..100u32).filter(|i| i % 3 == 0));
        let expected: Vec<u32> = core::iter::once(7).chain((0..100).step_by(3)).collect();
        assert_eq!(ids[..], expected[..]);
        assert!(aligned(&ids));
    }

    #[test]
    fn warm_refill_allocates_nothing_every_lane_type() {
        warm_refill_allocates_nothing::<i16>();
        warm_refill_allocates_nothing::<u16>();
        warm_refill_allocates_nothing::<u32>();
        warm_refill_allocates_nothing::<f32>();
    }

    fn resize_fills_across_blocks<T: Sample>() {
        // Every start and end around block edges, growing kept and new
        // blocks, after lanes that held other values.
        let per_block = 64 / size_of::<T>();
        for old in [0, 1, per_block - 1, per_block, per_block + 3, 3 * per_block] {
            let lens = [old, old + 1, per_block, 2 * per_block + 5, 4 * per_block, 9 * per_block];
            for len in lens.into_iter().filter(|&len| len >= old) {
                let mut xs = AlignedColumn::<T>::new();
                (0..6 * per_block).for_each(|i| xs.push(T::sample(i)));
                xs.truncate(old);
                xs.resize(len, T::sample(999));
                assert_eq!(xs.len(), len);
                assert!((0..old).all(|i| xs[i] == T::sample(i)), "old {old}, len {len}");
                assert!(xs[old..].iter().all(|&v| v == T::sample(999)), "old {old}, len {len}");
                let mut fresh = AlignedColumn::<T>::new();
                fresh.resize(old, T::sample(1));
                fresh.resize(len, T::sample(2));
                assert!(fresh[..old].iter().all(|&v| v == T::sample(1)));
                assert!(fresh[old..].iter().all(|&v| v == T::sample(2)));
            }
        }
    }

    #[test]
    fn resize_fills_across_blocks_every_lane_type() {
        resize_fills_across_blocks::<i16>();
        resize_fills_across_blocks::<u16>();
        resize_fills_across_blocks::<u32>();
        resize_fills_across_blocks::<f32>();
    }

    #[test]
    fn resize_for_overwrite_keeps_held_lanes_and_zeroes_new_blocks() {
        let mut xs = AlignedColumn::<u32>::new();
        (0..40).for_each(|i| xs.push(i + 1));
        xs.clear();
        xs.resize_for_overwrite(40);
        assert!((0..40).all(|i| xs[i] == i as u32 + 1), "held lanes are not written");
        xs.truncate(3);
        xs.resize_for_overwrite(100);
        assert_eq!(xs.len(), 100);
        assert_eq!(xs[..3], [1, 2, 3]);
        assert!(xs[48..].iter().all(|&v| v == 0), "added blocks are zeroed");
        xs.resize_for_overwrite(5);
        assert_eq!(xs[..], [1, 2, 3, 4, 5]);
    }

    #[test]
    fn reserve_exact_rounds_to_whole_blocks() {
        let mut lo = AlignedColumn::<i16>::new();
        lo.reserve_exact(40);
        assert_eq!(lo.capacity(), 64);
        let mut ids = AlignedColumn::<u32>::new();
        ids.reserve_exact(40);
        assert_eq!(ids.capacity(), 48);
        // Room already held is not reserved again.
        ids.resize(40, 0);
        ids.reserve_exact(8);
        assert_eq!(ids.capacity(), 48);
    }

    #[test]
    fn lanes_past_the_length_stay_initialised_after_shrinking() {
        // The block that holds the last lane may be read whole: lanes past
        // `len` keep what they held (or zero), never garbage.
        let mut xs = AlignedColumn::<u32>::new();
        xs.resize(20, 9);
        xs.truncate(3);
        xs.resize(5, 1);
        assert_eq!(xs[..], [9, 9, 9, 1, 1]);
        let mut fresh = AlignedColumn::<f32>::new();
        fresh.push(1.0);
        assert_eq!(fresh.capacity() % LANES, 0);
        fresh.resize(LANES, 0.0);
        assert!(fresh[1..].iter().all(|&v| v == 0.0));
    }

    #[test]
    fn sentinel_boxes_overlap_nothing_finite_nor_each_other() {
        // The padding rule of box columns: min = +inf, max = -inf, id
        // SENTINEL_ID. The inclusive overlap test is false for a sentinel
        // against any finite box and against another sentinel.
        let mut min = AlignedColumn::<f32>::new();
        let mut max = AlignedColumn::<f32>::new();
        for (lo, hi) in [(-f32::MAX, f32::MAX), (0.0, 0.0)] {
            min.push(lo);
            max.push(hi);
        }
        min.resize(LANES, f32::INFINITY);
        max.resize(LANES, f32::NEG_INFINITY);
        let overlap = |a: usize, b: usize| min[a] <= max[b] && min[b] <= max[a];
        assert!(overlap(0, 1), "real boxes must still overlap");
        for s in 2..LANES {
            for other in 0..LANES {
                assert!(!overlap(s, other) && !overlap(other, s), "slot {s} vs {other}");
            }
        }
        assert!(crate::MAX_BOXES <= SENTINEL_ID as usize, "a real id may be the sentinel");
    }
}
