//! [`Pool`]: a typed growable buffer that a frame resets and refills.

use core::ops::{Deref, DerefMut};

/// A typed, growable buffer reused across frames.
///
/// A frame calls [`reset`](Pool::reset) (O(1): the length drops to zero, the
/// capacity is kept), then carves out space with [`allocate`](Pool::allocate),
/// [`push`](Pool::push) or [`extend_from_slice`](Pool::extend_from_slice),
/// each of which returns the offset of what it appended. Offsets, not
/// references, name the pieces, so a node can point at its items while the
/// pool keeps growing.
///
/// Growth is amortised (the backing `Vec` at least doubles when it grows).
/// Once a pool has reached the largest size a frame needs — after warm-up,
/// e.g. one frame of the same sizes — `reset` followed by the same
/// allocations performs **zero heap allocations**: a warm frame only writes
/// into memory the pool already owns. The pool never shrinks by itself.
///
/// # Examples
///
/// ```
/// use broadphase_storage::Pool;
///
/// let mut counts: Pool<u32> = Pool::new();
/// for _frame in 0..3 {
///     counts.reset();
///     let a = counts.allocate(4, 0); // four zeroed counters at offset a
///     let b = counts.push(7);
///     counts[a + 1] += 1;
///     assert_eq!((a, b), (0, 4));
///     assert_eq!(counts.as_slice(), &[0, 1, 0, 0, 7]);
/// }
/// ```
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Pool<T: Copy> {
    buf: Vec<T>,
}

impl<T: Copy> Clone for Pool<T> {
    fn clone(&self) -> Self {
        Self { buf: self.buf.clone() }
    }

    /// Copies `source` into the pool's own buffer: no allocation when the
    /// pool already has room for it (a snapshot taken every frame into the
    /// same pool allocates nothing once warm).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::Pool;
    /// let mut source: Pool<u32> = Pool::new();
    /// source.extend_from_slice(&[1, 2, 3]);
    /// let mut copy = Pool::with_capacity(8);
    /// copy.clone_from(&source);
    /// assert_eq!(copy.as_slice(), &[1, 2, 3]);
    /// assert!(copy.capacity() >= 8); // its own buffer, kept
    /// ```
    fn clone_from(&mut self, source: &Self) {
        self.buf.clone_from(&source.buf);
    }
}

impl<T: Copy> Default for Pool<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Pool<T> {
    /// An empty pool; allocates nothing until something is appended.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = broadphase_storage::Pool::<f32>::new();
    /// assert!(pool.is_empty());
    /// assert_eq!(pool.capacity(), 0);
    /// ```
    #[inline]
    pub const fn new() -> Self {
        Self { buf: Vec::new() }
    }

    /// An empty pool with room for at least `n` items before it reallocates.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = broadphase_storage::Pool::<u32>::with_capacity(100);
    /// assert!(pool.capacity() >= 100);
    /// assert_eq!(pool.len(), 0);
    /// ```
    #[inline]
    pub fn with_capacity(n: usize) -> Self {
        Self { buf: Vec::with_capacity(n) }
    }

    /// Forgets every item in O(1); the capacity is kept for the next frame.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// pool.allocate(1000, 0u8);
    /// let cap = pool.capacity();
    /// pool.reset();
    /// assert_eq!((pool.len(), pool.capacity()), (0, cap));
    /// ```
    #[inline]
    pub fn reset(&mut self) {
        // `T: Copy` has no destructor, so this only stores the new length.
        self.buf.clear();
    }

    /// Makes room for `len` items in all, as [`reserve_huge`] grows a
    /// buffer: amortised, and a large one on huge pages where the system
    /// offers them on request.
    ///
    /// [`reserve_huge`]: crate::reserve_huge
    #[inline]
    fn make_room(&mut self, len: usize) {
        crate::huge_pages::reserve_huge(&mut self.buf, len);
    }

    /// Forgets every item from `len` on in O(1) (nothing if there are not
    /// that many); the capacity is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// pool.extend_from_slice(&[1u32, 2, 3]);
    /// pool.truncate(1);
    /// assert_eq!(pool[..], [1]);
    /// pool.truncate(5);
    /// assert_eq!(pool.len(), 1);
    /// ```
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    /// Appends `n` copies of `fill` and returns the offset of the first.
    ///
    /// `n == 0` is allowed and returns the current length.
    ///
    /// # Panics
    ///
    /// If the new length overflows `usize` or memory runs out.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// assert_eq!(pool.allocate(3, 1.5f32), 0);
    /// assert_eq!(pool.allocate(2, 0.0), 3);
    /// assert_eq!(&pool[3..5], &[0.0, 0.0]);
    /// ```
    #[inline]
    pub fn allocate(&mut self, n: usize, fill: T) -> usize {
        let start = self.buf.len();
        let end = start.checked_add(n).expect("Pool::allocate: length overflows usize");
        self.make_room(end);
        self.buf.resize(end, fill);
        start
    }

    /// Appends one item and returns its index.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// assert_eq!(pool.push('a'), 0);
    /// assert_eq!(pool.push('b'), 1);
    /// assert_eq!(pool[1], 'b');
    /// ```
    #[inline]
    pub fn push(&mut self, v: T) -> usize {
        let index = self.buf.len();
        self.make_room(index + 1);
        self.buf.push(v);
        index
    }

    /// Appends a copy of `items` and returns the offset of the first.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// pool.push(9u16);
    /// assert_eq!(pool.extend_from_slice(&[1, 2, 3]), 1);
    /// assert_eq!(pool.as_slice(), &[9, 1, 2, 3]);
    /// ```
    #[inline]
    pub fn extend_from_slice(&mut self, items: &[T]) -> usize {
        let start = self.buf.len();
        self.make_room(start.saturating_add(items.len()));
        self.buf.extend_from_slice(items);
        start
    }

    /// Removes the last item and returns it, or `None` if the pool is
    /// empty; the capacity is kept (a pool used as a stack).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut free = broadphase_storage::Pool::new();
    /// free.extend_from_slice(&[4u32, 9]);
    /// assert_eq!(free.pop(), Some(9));
    /// assert_eq!(free.pop(), Some(4));
    /// assert_eq!(free.pop(), None);
    /// ```
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.buf.pop()
    }

    /// Sets the length to `len`: forgets the items from `len` on, or
    /// appends copies of `fill` up to it.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut marks = broadphase_storage::Pool::new();
    /// marks.resize(3, 0u32);
    /// marks[1] = 5;
    /// marks.resize(2, 9);
    /// marks.resize(4, 7);
    /// assert_eq!(marks[..], [0, 5, 7, 7]);
    /// ```
    #[inline]
    pub fn resize(&mut self, len: usize, fill: T) {
        self.make_room(len);
        self.buf.resize(len, fill);
    }

    /// Drops consecutive repeated items, keeping the first of each run
    /// (every repeat, once the pool is sorted).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut slots = broadphase_storage::Pool::new();
    /// slots.extend_from_slice(&[1u32, 1, 2, 3, 3, 3, 1]);
    /// slots.dedup();
    /// assert_eq!(slots[..], [1, 2, 3, 1]);
    /// ```
    #[inline]
    pub fn dedup(&mut self)
    where
        T: PartialEq,
    {
        self.buf.dedup();
    }

    /// Makes room for at least `additional` more items without reallocating.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::<u64>::new();
    /// pool.reserve(64);
    /// assert!(pool.capacity() >= 64);
    /// ```
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        self.make_room(self.buf.len().saturating_add(additional));
    }

    /// Makes room for at least `additional` more items, or says that the
    /// memory could not be had (the pool is then unchanged), for callers
    /// that report running out of memory as an error.
    ///
    /// # Errors
    ///
    /// [`TryReserveError`](std::collections::TryReserveError) if the
    /// capacity would overflow or the allocator failed.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::<u32>::new();
    /// assert!(pool.try_reserve(16).is_ok());
    /// assert!(pool.capacity() >= 16);
    /// assert!(pool.try_reserve(usize::MAX).is_err());
    /// ```
    #[inline]
    pub fn try_reserve(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.buf.try_reserve(additional)
    }

    /// Makes room for exactly `additional` more items past the current
    /// length (no amortised slack), so pools reserved to the same room
    /// end up with the same capacity.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::<u64>::new();
    /// pool.reserve_exact(100);
    /// assert!(pool.capacity() >= 100);
    /// ```
    #[inline]
    pub fn reserve_exact(&mut self, additional: usize) {
        self.buf.reserve_exact(additional);
    }

    /// The number of items appended since the last reset.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// pool.allocate(5, 0i32);
    /// assert_eq!(pool.len(), 5);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether no item was appended since the last reset.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// assert!(pool.is_empty());
    /// pool.push(1u8);
    /// assert!(!pool.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// How many items fit before the pool must reallocate.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::with_capacity(8);
    /// pool.push(0u32);
    /// assert!(pool.capacity() >= 8);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The items, in the order they were appended.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// pool.extend_from_slice(&[3, 1, 2]);
    /// assert_eq!(pool.as_slice().iter().max(), Some(&3));
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.buf
    }

    /// The items, mutable.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut pool = broadphase_storage::Pool::new();
    /// pool.extend_from_slice(&[3, 1, 2]);
    /// pool.as_mut_slice().sort_unstable();
    /// assert_eq!(pool.as_slice(), &[1, 2, 3]);
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.buf
    }
}

/// The items as a slice: indexing by position or range (`pool[i]`,
/// `pool[a..b]`), iteration and every slice method.
impl<T: Copy> Deref for Pool<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        &self.buf
    }
}

/// The items as a mutable slice.
impl<T: Copy> DerefMut for Pool<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.buf
    }
}

/// Iterates over the items, like `&Vec<T>`.
impl<'a, T: Copy> IntoIterator for &'a Pool<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterates over the items mutably, like `&mut Vec<T>`.
impl<'a, T: Copy> IntoIterator for &'a mut Pool<T> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// Appends every item of an iterator, like `Vec::extend` (growth
/// amortised, room for the iterator's lower size bound made first).
///
/// # Examples
///
/// ```
/// let mut moved = broadphase_storage::Pool::new();
/// moved.extend((0..10u32).filter(|slot| slot % 3 == 0));
/// assert_eq!(moved[..], [0, 3, 6, 9]);
/// moved.extend(&[1, 2]);
/// assert_eq!(moved.len(), 6);
/// ```
impl<T: Copy> Extend<T> for Pool<T> {
    #[inline]
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        let items = items.into_iter();
        self.make_room(self.buf.len().saturating_add(items.size_hint().0));
        self.buf.extend(items);
    }
}

/// Appends a copy of every item an iterator borrows.
impl<'a, T: Copy + 'a> Extend<&'a T> for Pool<T> {
    #[inline]
    fn extend<I: IntoIterator<Item = &'a T>>(&mut self, items: I) {
        let items = items.into_iter();
        self.make_room(self.buf.len().saturating_add(items.size_hint().0));
        self.buf.extend(items);
    }
}

/// A counting global allocator for this crate's unit tests, so that "a warm
/// frame allocates nothing" is checked rather than assumed. Counts are per
/// thread, so tests running in parallel do not disturb each other.
#[cfg(test)]
#[allow(unsafe_code, reason = "a counting allocator forwards to the system allocator")]
pub(crate) mod alloc_count {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    }

    struct Counting;

    fn bump() {
        // `try_with`: during thread teardown the counter may be gone.
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    }

    // SAFETY: every method forwards to `System` with the caller's arguments,
    // so `System`'s guarantees carry over; counting touches no heap memory
    // (the thread-local is const-initialised and has no destructor).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            bump();
            // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            bump();
            // SAFETY: forwarded unchanged; the caller upholds the contract.
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            bump();
            // SAFETY: `ptr` came from this allocator, i.e. from `System`.
            unsafe { System.realloc(ptr, layout, new_size) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` came from this allocator, i.e. from `System`.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    /// Runs `f` and returns how many allocations (and reallocations) this
    /// thread made meanwhile.
    pub(crate) fn allocations_in(f: impl FnOnce()) -> u64 {
        let before = ALLOCATIONS.with(Cell::get);
        f();
        ALLOCATIONS.with(Cell::get) - before
    }
}

#[cfg(test)]
mod tests {
    use super::alloc_count::allocations_in;
    use super::*;

    #[test]
    fn allocate_returns_consecutive_offsets_and_fills() {
        let mut pool = Pool::new();
        assert_eq!(pool.allocate(3, 7u32), 0);
        assert_eq!(pool.allocate(0, 9), 3);
        assert_eq!(pool.allocate(2, 5), 3);
        assert_eq!(pool.push(1), 5);
        assert_eq!(pool.extend_from_slice(&[2, 3]), 6);
        assert_eq!(pool.as_slice(), &[7, 7, 7, 5, 5, 1, 2, 3]);
        assert_eq!(pool.len(), 8);
        pool.truncate(4);
        assert_eq!(pool[..], [7, 7, 7, 5]);
        assert_eq!(pool.push(6), 4, "offsets continue from the truncated length");
    }

    #[test]
    fn reset_keeps_capacity_and_storage() {
        let mut pool = Pool::new();
        pool.allocate(10_000, 1u64);
        let (cap, ptr) = (pool.capacity(), pool.as_slice().as_ptr());
        pool.reset();
        assert!(pool.is_empty());
        assert_eq!(pool.capacity(), cap);
        // New contents are the new fill, never stale data.
        assert_eq!(pool.allocate(10_000, 2), 0);
        assert!(pool.as_slice().iter().all(|&v| v == 2));
        assert_eq!(pool.as_slice().as_ptr(), ptr);
    }

    #[test]
    fn warm_frame_allocates_nothing() {
        let mut pool = Pool::new();
        let frame = |pool: &mut Pool<u32>| {
            pool.reset();
            for i in 0..500 {
                let at = pool.allocate(i % 7, i as u32);
                pool[at..].fill(3);
                pool.push(i as u32);
            }
            pool.extend_from_slice(&[1; 100]);
        };
        assert!(allocations_in(|| frame(&mut pool)) > 0, "counter must see the cold frame");
        for _ in 0..3 {
            assert_eq!(allocations_in(|| frame(&mut pool)), 0);
        }
    }

    #[test]
    fn warm_stack_and_extend_allocate_nothing() {
        let mut pool = Pool::new();
        let frame = |pool: &mut Pool<u32>| {
            pool.reset();
            pool.extend((0..1000u32).filter(|v| v % 3 != 0));
            pool.resize(2000, 1);
            while pool.pop().is_some_and(|v| v == 1) {}
            pool.dedup();
            assert_eq!(pool.len(), 665);
        };
        assert!(allocations_in(|| frame(&mut pool)) > 0, "counter must see the cold frame");
        for _ in 0..3 {
            assert_eq!(allocations_in(|| frame(&mut pool)), 0);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pool_grown_large_by_pushes_sits_on_advised_pages() {
        let mut pool: Pool<u64> = Pool::new();
        (0..4_000_000u64).for_each(|i| {
            pool.push(i);
        });
        let middle = pool.as_slice().as_ptr() as usize + 16_000_000;
        assert_ne!(broadphase_testkit::huge_pages_advised(middle), Some(false));
        assert_eq!(pool[3_999_999], 3_999_999);
    }

    #[test]
    fn growth_is_amortised() {
        let mut pool = Pool::new();
        let n = allocations_in(|| {
            for i in 0..100_000u32 {
                pool.push(i);
            }
        });
        assert!(n <= 32, "{n} reallocations for 100k pushes");
    }

    #[test]
    fn indexing_by_position_and_range() {
        let mut pool: Pool<i32> = Pool::default();
        pool.extend_from_slice(&[1, 2, 3, 4]);
        pool[0] = 10;
        pool[1..3].copy_from_slice(&[20, 30]);
        assert_eq!(pool[..], [10, 20, 30, 4]);
        assert_eq!(pool[3], 4);
        pool.as_mut_slice()[3] = 40;
        assert_eq!(&pool[2..], &[30, 40]);
        for v in &mut pool {
            *v += 1;
        }
        assert_eq!((&pool).into_iter().sum::<i32>(), 104);
    }

    #[test]
    #[should_panic]
    fn index_past_len_panics_even_within_capacity() {
        let mut pool = Pool::with_capacity(16);
        pool.push(1u8);
        let _ = pool[1];
    }

    #[test]
    fn with_capacity_does_not_reallocate_within_capacity() {
        let mut pool = Pool::with_capacity(64);
        assert_eq!(allocations_in(|| _ = pool.allocate(64, 0u16)), 0);
    }
}
