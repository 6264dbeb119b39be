//! The rays' node test: where a ray enters each of a node's eight lane
//! boxes, and which lanes it meets before the best hit so far.
//!
//! A filter, never the answer: a lane it drops must hold no box the exact
//! test [`Ray::entry`] hits there. Two versions, each widened by what its
//! arithmetic can be off by:
//!
//! - [`Lanes`] in `f64`, for any ray and box: no product overflows or is
//!   NaN anywhere in the `f32` range, and every `t` is widened by a relative
//!   2^-46, as the grid's walk widens its own;
//! - [`Lanes32`] in `f32`, twice the lanes per register, for the common
//!   case of a ray and a tree within [`TAME`] (coordinates below 2^60 and
//!   direction components 0 or between 2^-60 and 2^60): there no `t`
//!   overflows (each is below 2^122), and each is within a relative 2^-22
//!   plus half the smallest subnormal of its exact value, which the
//!   widening by a relative 2^-18 and an absolute 2^-126 covers.
//!
//! Each has a portable version and an AVX2 one with the same operations
//! in the same order (IEEE arithmetic, no fused multiply-add), so both
//! pass the same lanes. On an axis the ray does not move along, neither
//! divides: the slab holds the ray for every `t` or for none.

use super::ray_tree::{WIDTH, WideNode};
use broadphase_storage::Ray;

/// The relative error [`Lanes`] allows for in every `t` it computes: far
/// above the three roundings of `f64` in a slab `t` here (2^-53 each) and
/// the two in [`Ray::entry`]'s.
const SLACK: f64 = 1.0 / (1u64 << 46) as f64;

/// The bound on coordinates (and on `1 / |dir|`, and `|dir|`) within
/// which [`Lanes32`] may test a ray: 2^60.
pub(super) const TAME: f32 = (1u64 << 60) as f32;

/// The relative error [`Lanes32`] allows for: three roundings of `f32`
/// (2^-24 each) in a slab `t`, with room.
const SLACK32: f32 = 1.0 / (1u32 << 18) as f32;

/// The absolute error [`Lanes32`] allows for: a `t` below the normal
/// range is off by at most half the smallest subnormal.
const FLOOR32: f32 = f32::MIN_POSITIVE;

/// The ray as the node test reads it, per axis: which bound the ray meets
/// first, where `t` is measured from for each bound, and `1 / dir`.
pub(super) struct Lanes {
    /// Whether the ray meets a slab at its `hi` first (it moves down).
    down: [bool; 3],
    /// The origin for the first bound met and for the other: the origin,
    /// except on an axis the ray does not move along (see [`Lanes::of`]).
    near_origin: [f64; 3],
    far_origin: [f64; 3],
    inverse: [f64; 3],
    /// The largest `t` of a hit: `max_t`, or the largest finite `f64`
    /// (every hit of the exact test starts at a finite `t`).
    cap: f64,
}

impl Lanes {
    pub(super) fn of(ray: &Ray) -> Self {
        let origin = ray.origin.to_array().map(f64::from);
        let dir = ray.dir.to_array().map(f64::from);
        // On an axis the ray does not move along, `1 / dir` is +inf and
        // the bounds are measured from just above the origin (`lo`) and
        // just below it (`hi`): never 0, since a box's bound is an `f32` and
        // these are not. A box's `lo` then gives -inf if at or below the
        // origin, +inf if above; its `hi` +inf if at or above, -inf if
        // below: the slab holds the ray for every `t` or for none, as in
        // the exact test, and no product is NaN.
        let still = dir.map(|d| d == 0.0);
        Lanes {
            down: dir.map(|d| d < 0.0),
            near_origin: [0, 1, 2].map(|a| if still[a] { origin[a].next_up() } else { origin[a] }),
            far_origin: [0, 1, 2].map(|a| if still[a] { origin[a].next_down() } else { origin[a] }),
            inverse: dir.map(|d| if d == 0.0 { f64::INFINITY } else { 1.0 / d }),
            cap: f64::from(ray.max_t).min(f64::MAX),
        }
    }

    /// Where the ray enters each lane's box (widened by the allowed
    /// error), and the lanes it meets before `limit`: a lane it misses, or
    /// enters at or past `limit`, holds no hit the exact test puts before
    /// `limit`.
    #[inline(always)]
    pub(super) fn test(&self, node: &WideNode, limit: f64) -> ([f64; WIDTH], u32) {
        let mut first = [0.0f64; WIDTH];
        let mut last = [self.cap; WIDTH];
        for axis in 0..3 {
            let (near, far) = if self.down[axis] {
                (&node.hi[axis], &node.lo[axis])
            } else {
                (&node.lo[axis], &node.hi[axis])
            };
            let (o_near, o_far, inverse) =
                (self.near_origin[axis], self.far_origin[axis], self.inverse[axis]);
            for lane in 0..WIDTH {
                let enter = (f64::from(near[lane]) - o_near) * inverse;
                let leave = (f64::from(far[lane]) - o_far) * inverse;
                first[lane] = if enter > first[lane] { enter } else { first[lane] };
                last[lane] = if leave < last[lane] { leave } else { last[lane] };
            }
        }
        let mut met = 0u32;
        for lane in 0..WIDTH {
            // `first` is at least 0: shrinking it moves it down.
            first[lane] *= 1.0 - SLACK;
            let last = last[lane] + last[lane].abs() * SLACK;
            met |= u32::from(first[lane] <= last && first[lane] < limit) << lane;
        }
        (first, met)
    }
}

#[cfg(simd)]
impl Lanes {
    /// [`test`](Self::test) in AVX2 registers.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    pub(super) unsafe fn test_avx2(&self, node: &WideNode, limit: f64) -> ([f64; WIDTH], u32) {
        use core::arch::x86_64::*;
        // SAFETY: the caller proves AVX2; each load reads four `f32` of an
        // eight-lane array, at lane 0 or lane 4.
        unsafe {
            let load = |bounds: &[f32; WIDTH], half: usize| {
                _mm256_cvtps_pd(_mm_loadu_ps(bounds.as_ptr().add(4 * half)))
            };
            let mut first = [_mm256_setzero_pd(); WIDTH / 4];
            let mut last = [_mm256_set1_pd(self.cap); WIDTH / 4];
            for axis in 0..3 {
                let (near, far) = if self.down[axis] {
                    (&node.hi[axis], &node.lo[axis])
                } else {
                    (&node.lo[axis], &node.hi[axis])
                };
                let o_near = _mm256_set1_pd(self.near_origin[axis]);
                let o_far = _mm256_set1_pd(self.far_origin[axis]);
                let inverse = _mm256_set1_pd(self.inverse[axis]);
                for half in 0..WIDTH / 4 {
                    let enter = _mm256_mul_pd(_mm256_sub_pd(load(near, half), o_near), inverse);
                    let leave = _mm256_mul_pd(_mm256_sub_pd(load(far, half), o_far), inverse);
                    // `maxpd a, b` is `a > b ? a : b`, as in `test`.
                    first[half] = _mm256_max_pd(enter, first[half]);
                    last[half] = _mm256_min_pd(leave, last[half]);
                }
            }
            let shrink = _mm256_set1_pd(1.0 - SLACK);
            let slack = _mm256_set1_pd(SLACK);
            let sign = _mm256_set1_pd(-0.0);
            let limit = _mm256_set1_pd(limit);
            let mut entries = [0.0f64; WIDTH];
            let mut met = 0u32;
            for half in 0..WIDTH / 4 {
                let first = _mm256_mul_pd(first[half], shrink);
                let abs = _mm256_andnot_pd(sign, last[half]);
                let last = _mm256_add_pd(last[half], _mm256_mul_pd(abs, slack));
                let inside = _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_LE_OQ>(first, last),
                    _mm256_cmp_pd::<_CMP_LT_OQ>(first, limit),
                );
                met |= (_mm256_movemask_pd(inside) as u32) << (4 * half);
                _mm256_storeu_pd(entries.as_mut_ptr().add(4 * half), first);
            }
            (entries, met)
        }
    }
}

/// The ray as the `f32` node test reads it (see the module's docs for when
/// it may).
pub(super) struct Lanes32 {
    down: [bool; 3],
    /// Whether the ray stays still along the axis: its slabs hold it for
    /// every `t` or for none, decided by comparing bounds with the origin.
    still: [bool; 3],
    origin: [f32; 3],
    inverse: [f32; 3],
    /// `max_t`, or the largest finite `f32` (every hit starts at a finite
    /// `t`).
    cap: f32,
}

impl Lanes32 {
    /// The ray, if it is within [`TAME`]: its origin's coordinates below
    /// it, its direction's components 0 or with `1 / |d|` and `|d|` at most
    /// it.
    pub(super) fn of(ray: &Ray) -> Option<Self> {
        let origin = ray.origin.to_array();
        let dir = ray.dir.to_array();
        let tame = origin.iter().all(|o| o.abs() <= TAME)
            && dir.iter().all(|d| *d == 0.0 || (d.abs() <= TAME && d.abs() >= 1.0 / TAME));
        tame.then(|| Lanes32 {
            down: dir.map(|d| d < 0.0),
            still: dir.map(|d| d == 0.0),
            origin,
            inverse: dir.map(|d| if d == 0.0 { 0.0 } else { 1.0 / d }),
            cap: ray.max_t.min(f32::MAX),
        })
    }

    /// Where the ray enters and leaves one lane's slab on `axis`.
    #[inline(always)]
    fn slab(&self, axis: usize, near: f32, far: f32) -> (f32, f32) {
        if self.still[axis] {
            // `near` is the slab's `lo` here, `far` its `hi`.
            let enter = if near > self.origin[axis] { f32::INFINITY } else { f32::NEG_INFINITY };
            let leave = if far < self.origin[axis] { f32::NEG_INFINITY } else { f32::INFINITY };
            (enter, leave)
        } else {
            let (o, inverse) = (self.origin[axis], self.inverse[axis]);
            ((near - o) * inverse, (far - o) * inverse)
        }
    }

    /// As [`Lanes::test`], in `f32`; `limit` is `+inf` or an `f32`.
    #[inline(always)]
    pub(super) fn test(&self, node: &WideNode, limit: f64) -> ([f32; WIDTH], u32) {
        let limit = limit as f32;
        let mut first = [0.0f32; WIDTH];
        let mut last = [self.cap; WIDTH];
        for axis in 0..3 {
            let (near, far) = if self.down[axis] {
                (&node.hi[axis], &node.lo[axis])
            } else {
                (&node.lo[axis], &node.hi[axis])
            };
            for lane in 0..WIDTH {
                let (enter, leave) = self.slab(axis, near[lane], far[lane]);
                first[lane] = if enter > first[lane] { enter } else { first[lane] };
                last[lane] = if leave < last[lane] { leave } else { last[lane] };
            }
        }
        let mut met = 0u32;
        for lane in 0..WIDTH {
            first[lane] = first[lane] * (1.0 - SLACK32) - FLOOR32;
            let last = last[lane] + last[lane].abs() * SLACK32 + FLOOR32;
            met |= u32::from(first[lane] <= last && first[lane] < limit) << lane;
        }
        (first, met)
    }

    /// [`test`](Self::test) in one AVX2 register per bound.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(simd)]
    #[inline(always)]
    pub(super) unsafe fn test_avx2(&self, node: &WideNode, limit: f64) -> ([f32; WIDTH], u32) {
        use core::arch::x86_64::*;
        const _: () = assert!(WIDTH == 8, "one AVX2 register of f32 per bound");
        // SAFETY: the caller proves AVX2; each load reads an eight-lane
        // array of `f32`.
        unsafe {
            let mut first = _mm256_setzero_ps();
            let mut last = _mm256_set1_ps(self.cap);
            for axis in 0..3 {
                let (near, far) = if self.down[axis] {
                    (&node.hi[axis], &node.lo[axis])
                } else {
                    (&node.lo[axis], &node.hi[axis])
                };
                let near = _mm256_loadu_ps(near.as_ptr());
                let far = _mm256_loadu_ps(far.as_ptr());
                let o = _mm256_set1_ps(self.origin[axis]);
                let (enter, leave) = if self.still[axis] {
                    let inf = _mm256_set1_ps(f32::INFINITY);
                    let minus_inf = _mm256_set1_ps(f32::NEG_INFINITY);
                    (
                        _mm256_blendv_ps(minus_inf, inf, _mm256_cmp_ps::<_CMP_GT_OQ>(near, o)),
                        _mm256_blendv_ps(inf, minus_inf, _mm256_cmp_ps::<_CMP_LT_OQ>(far, o)),
                    )
                } else {
                    let inverse = _mm256_set1_ps(self.inverse[axis]);
                    (
                        _mm256_mul_ps(_mm256_sub_ps(near, o), inverse),
                        _mm256_mul_ps(_mm256_sub_ps(far, o), inverse),
                    )
                };
                // `maxps a, b` is `a > b ? a : b`, as in `test`.
                first = _mm256_max_ps(enter, first);
                last = _mm256_min_ps(leave, last);
            }
            let floor = _mm256_set1_ps(FLOOR32);
            let first = _mm256_sub_ps(_mm256_mul_ps(first, _mm256_set1_ps(1.0 - SLACK32)), floor);
            let abs = _mm256_andnot_ps(_mm256_set1_ps(-0.0), last);
            let last = _mm256_add_ps(
                _mm256_add_ps(last, _mm256_mul_ps(abs, _mm256_set1_ps(SLACK32))),
                floor,
            );
            let inside = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(first, last),
                _mm256_cmp_ps::<_CMP_LT_OQ>(first, _mm256_set1_ps(limit as f32)),
            );
            let mut entries = [0.0f32; WIDTH];
            _mm256_storeu_ps(entries.as_mut_ptr(), first);
            (entries, _mm256_movemask_ps(inside) as u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use broadphase_storage::Aabb;
    use glam::Vec3;
    use proptest::prelude::*;

    /// A coordinate anywhere in the `f32` range, often at the edges of the
    /// `f32` test's domain.
    fn coordinate() -> impl Strategy<Value = f32> {
        prop_oneof![
            -100.0f32..100.0,
            Just(TAME),
            Just(-TAME),
            Just(TAME.next_up()),
            Just(1.0e18f32),
            Just(f32::MAX),
            Just(0.0f32),
            Just(f32::from_bits(1)),
            any::<f32>().prop_filter("finite", |x| x.is_finite()),
        ]
    }

    fn component() -> impl Strategy<Value = f32> {
        prop_oneof![
            -1.0f32..1.0,
            Just(0.0f32),
            Just(1.0 / TAME),
            Just(-TAME),
            Just((1.0 / TAME).next_down()),
            Just(f32::from_bits(1)),
            any::<f32>().prop_filter("finite", |x| x.is_finite()),
        ]
    }

    fn a_box() -> impl Strategy<Value = Aabb> {
        (prop::array::uniform3(coordinate()), prop::array::uniform3(coordinate())).prop_map(
            |(a, b)| {
                let (a, b) = (Vec3::from(a), Vec3::from(b));
                Aabb::new(a.min(b), a.max(b))
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every version of both tests keeps every lane whose box the exact
        /// test hits before the limit, and the SIMD versions keep exactly
        /// the lanes their portable twins keep.
        #[test]
        fn no_lane_the_exact_test_hits_is_dropped(
            boxes in prop::collection::vec(a_box(), 1..=WIDTH),
            origin in prop::array::uniform3(coordinate()),
            dir in prop::array::uniform3(component()),
            max_t in prop_oneof![Just(0.0f32), Just(f32::INFINITY), Just(f32::MAX), 0.0f32..1e3],
            limit in prop_oneof![Just(f64::INFINITY), (0.0f32..1e3).prop_map(f64::from)],
        ) {
            let ray = Ray::new(Vec3::from(origin), Vec3::from(dir), max_t);
            let node = WideNode::leaf(boxes.iter().enumerate().map(|(i, b)| (i as u32, *b)));
            let must: u32 = boxes
                .iter()
                .enumerate()
                .filter(|(_, b)| ray.entry(b).is_some_and(|t| f64::from(t) < limit))
                .map(|(i, _)| 1 << i)
                .sum();
            let wide = Lanes::of(&ray);
            let (_, met) = wide.test(&node, limit);
            prop_assert_eq!(met & must, must, "f64 test dropped a hit");
            #[cfg(simd)]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: just checked.
                prop_assert_eq!(unsafe { wide.test_avx2(&node, limit) }.1, met);
            }
            let tame = boxes.iter().all(|b| b.min.abs().max(b.max.abs()).max_element() <= TAME);
            if let Some(narrow) = Lanes32::of(&ray).filter(|_| tame) {
                let (_, met) = narrow.test(&node, limit);
                prop_assert_eq!(met & must, must, "f32 test dropped a hit");
                #[cfg(simd)]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: just checked.
                    prop_assert_eq!(unsafe { narrow.test_avx2(&node, limit) }.1, met);
                }
            }
        }
    }

    /// Rays aimed at a corner of a box (ending there, or not at all), with
    /// the limit at a box's own entry: the cases where a test off by a
    /// rounding drops the box.
    #[test]
    fn aimed_rays_keep_the_boxes_they_graze() {
        let mut rng = broadphase_scenes::SplitMix64::new(3);
        let mut point = |scale: f32| {
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0))
                * scale
        };
        for round in 0..20_000 {
            let scale = [1.0, 100.0, 1e6, 1e15][round % 4];
            let boxes: Vec<Aabb> = (0..WIDTH)
                .map(|_| {
                    let (a, b) = (point(scale), point(scale));
                    Aabb::new(a.min(b), a.max(b))
                })
                .collect();
            let target = boxes[round % WIDTH];
            let corner = Vec3::select(point(1.0).cmpgt(Vec3::ZERO), target.max, target.min);
            let origin = point(scale * 4.0);
            let node = WideNode::leaf(boxes.iter().enumerate().map(|(i, b)| (i as u32, *b)));
            for max_t in [1.0, f32::INFINITY] {
                let ray = Ray::new(origin, corner - origin, max_t);
                let entries: Vec<Option<f32>> = boxes.iter().map(|b| ray.entry(b)).collect();
                let limits = entries.iter().flatten().map(|t| f64::from(t.next_up()));
                for limit in limits.chain([f64::INFINITY]) {
                    let must: u32 = (0..WIDTH)
                        .filter(|&i| entries[i].is_some_and(|t| f64::from(t) < limit))
                        .map(|i| 1 << i)
                        .sum();
                    let (_, met) = Lanes::of(&ray).test(&node, limit);
                    assert_eq!(met & must, must, "f64: {ray:?}, {boxes:?}");
                    if let Some(narrow) = Lanes32::of(&ray) {
                        let (_, met) = narrow.test(&node, limit);
                        assert_eq!(met & must, must, "f32: {ray:?}, {boxes:?}");
                    }
                }
            }
        }
    }

    /// Rays outside the `f32` test's domain are left to the `f64` one.
    #[test]
    fn untame_rays_have_no_f32_lanes() {
        let ray = |o: f32, d: f32| Ray::new(Vec3::new(o, 0.0, 0.0), Vec3::new(d, 0.0, 1.0), 1.0);
        assert!(Lanes32::of(&ray(TAME, 1.0 / TAME)).is_some());
        assert!(Lanes32::of(&ray(TAME.next_up(), 1.0)).is_none());
        assert!(Lanes32::of(&ray(0.0, TAME.next_up())).is_none());
        assert!(Lanes32::of(&ray(0.0, (1.0 / TAME).next_down())).is_none());
        assert!(Lanes32::of(&ray(0.0, 0.0)).is_some());
    }
}
