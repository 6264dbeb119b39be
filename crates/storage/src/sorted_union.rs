//! [`SortedUnion`]: two sorted lists read as one, merged only when read.

use crate::Pool;
use std::sync::{Mutex, OnceLock};

/// Two sorted lists with no item in common, read as their sorted union,
/// merged into a buffer of its own on the first read after a
/// [`reset`](Self::reset) and kept until the next.
///
/// A structure that keeps its output in two parts, one that changes every
/// frame and one that seldom does, pays for the union only when a caller
/// asks for it, and not at all while one part is empty: the other is
/// returned as it is. The merge buffer is reused, so a warm read allocates
/// nothing.
///
/// The owner calls [`reset`](Self::reset) whenever either list changes,
/// and always passes the same two lists to [`get`](Self::get) in between.
///
/// # Examples
///
/// ```
/// use broadphase_storage::SortedUnion;
/// let mut union = SortedUnion::default();
/// assert_eq!(union.get(&[1, 4], &[]), [1, 4]); // one part empty: no copy
/// assert_eq!(union.get(&[1, 4], &[2, 3, 9]), [1, 2, 3, 4, 9]);
/// union.reset(); // the parts changed
/// assert_eq!(union.get(&[5], &[2]), [2, 5]);
/// ```
#[derive(Debug)]
pub struct SortedUnion<T: Copy> {
    merged: OnceLock<Pool<T>>,
    /// The last merge's buffer, kept by `reset` for the next merge.
    spare: Mutex<Pool<T>>,
}

impl<T: Copy> Default for SortedUnion<T> {
    fn default() -> Self {
        Self { merged: OnceLock::new(), spare: Mutex::new(Pool::new()) }
    }
}

impl<T: Copy + Ord> SortedUnion<T> {
    /// The union of `first` and `second`, both sorted, sorted: `first` or
    /// `second` itself when the other is empty, else the merge, made on
    /// the first call after a [`reset`](Self::reset).
    pub fn get<'a>(&'a self, first: &'a [T], second: &'a [T]) -> &'a [T] {
        if second.is_empty() {
            return first;
        }
        if first.is_empty() {
            return second;
        }
        let merged = self.merged.get_or_init(|| {
            let mut out =
                core::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
            merge_sorted_into(first, second, &mut out);
            out
        });
        debug_assert_eq!(merged.len(), first.len() + second.len(), "read without a reset");
        merged
    }

    /// Forgets the last merge (the parts changed); its buffer is kept.
    pub fn reset(&mut self) {
        if let Some(old) = self.merged.take() {
            *self.spare.get_mut().unwrap_or_else(|e| e.into_inner()) = old;
        }
    }
}

/// Replaces `out` with the merge of `first` and `second`, both sorted:
/// sorted, the items of `first` before equal ones of `second`.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Pool, merge_sorted_into};
/// let mut out = Pool::new();
/// merge_sorted_into(&[1, 4, 6], &[2, 5], &mut out);
/// assert_eq!(out.as_slice(), [1, 2, 4, 5, 6]);
/// ```
pub fn merge_sorted_into<T: Copy + Ord>(first: &[T], second: &[T], out: &mut Pool<T>) {
    out.reset();
    out.reserve(first.len() + second.len());
    let (mut i, mut j) = (0, 0);
    while i < first.len() && j < second.len() {
        if second[j] < first[i] {
            out.push(second[j]);
            j += 1;
        } else {
            out.push(first[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&first[i..]);
    out.extend_from_slice(&second[j..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_any_interleaving_in_order() {
        let mut union = SortedUnion::default();
        for (first, second) in [
            (vec![1, 3, 5], vec![2, 4, 6]),
            (vec![1, 2], vec![3, 4]),
            (vec![3, 4], vec![1, 2]),
            (vec![7], vec![1, 2, 3]),
        ] {
            union.reset();
            let mut expected = [first.clone(), second.clone()].concat();
            expected.sort_unstable();
            assert_eq!(union.get(&first, &second), expected);
        }
    }

    #[test]
    fn an_empty_part_returns_the_other_itself() {
        let union = SortedUnion::default();
        let first = [1, 2, 3];
        assert!(core::ptr::eq(union.get(&first, &[]), &first[..]));
        assert!(core::ptr::eq(union.get(&[], &first), &first[..]));
    }

    #[test]
    fn reset_keeps_the_merge_buffer() {
        let mut union = SortedUnion::default();
        let big: Vec<u32> = (0..1000).map(|i| i * 2).collect();
        let odd: Vec<u32> = (0..1000).map(|i| i * 2 + 1).collect();
        let before = union.get(&big, &odd).as_ptr();
        union.reset();
        assert_eq!(union.get(&big, &odd).as_ptr(), before);
    }
}
