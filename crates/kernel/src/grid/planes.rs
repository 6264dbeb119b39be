//! The boxes a region made of planes meets ([`RegionTest::plane_test`]):
//! the box query's walk over the region's bounds, each plane dropped below
//! a cell that lies inside it, and each candidate decided from its
//! quantized box where that is sure.

#[cfg(simd)]
use super::cpu::Avx2PopcntToken;
use super::cpu::Kernel;
use super::hierarchy::AdaptiveGrid;
use super::leaf::{Corners, LeafView, corners_of, surely_overlap};
use super::quantize::{Cell, Item, LEVELS, OWNS_PAIR, WorldSteps};
use super::query::cells_met;
use broadphase_storage::{Aabb, RegionTest};
use glam::{DVec3, DVec4};

/// The most planes the quantized test takes (a bit each in a walk's
/// masks); a region with more is tested box by box.
pub(super) const MAX_PLANES: usize = 8;

/// Relative slack of the quantized plane test, over a plane's scale: well
/// above the error of its few `f32` operations (about `8 × 2⁻²⁴`) and of
/// the region's own `f64` test, so a box it calls is called the same way
/// by the exact test.
const SLACK: f64 = 4e-6;

/// The region's planes as the walk uses them.
#[derive(Clone, Copy, Debug)]
struct PlaneSet {
    /// The region's planes, for cells, in the region's own arithmetic.
    exact: [DVec4; MAX_PLANES],
    /// Each plane over column values, scaled: at a box's corner furthest
    /// along the normal, `a · c + b` is within `slack` of the plane there,
    /// `c` that corner as the columns store it: per axis the high column
    /// where `high`, else the low one.
    a: [[f32; 3]; MAX_PLANES],
    high: [[bool; 3]; MAX_PLANES],
    b: [f32; MAX_PLANES],
    slack: [f32; MAX_PLANES],
}

impl PlaneSet {
    /// `planes` over the quantizer's coordinates. A column value `c` is the
    /// coordinate `q = c + 32768`, and a corner quantized to `q` lies
    /// within `q - 1 ..= q + 2` steps ([`WorldSteps::span`], away from the
    /// border of the coordinates): `q + 0.5` steps, give or take 1.5.
    fn new(planes: &[DVec4], steps: &WorldSteps) -> PlaneSet {
        let mut set = PlaneSet {
            exact: [DVec4::ZERO; MAX_PLANES],
            a: [[0.0; 3]; MAX_PLANES],
            high: [[false; 3]; MAX_PLANES],
            b: [0.0; MAX_PLANES],
            slack: [0.0; MAX_PLANES],
        };
        for (p, &plane) in planes.iter().enumerate() {
            set.exact[p] = plane;
            let normal = plane.truncate().to_array();
            // As the region picks the furthest corner: `n >= 0` takes the
            // high one.
            set.high[p] = normal.map(|n| n >= 0.0);
            let (mut scale, mut spread, mut b) = (plane.w.abs(), 0.0, plane.w);
            for ((&n, &zero), &step) in normal.iter().zip(&steps.zero).zip(&steps.step) {
                // Bounds |n x| for every corner the coordinates hold, and
                // so every term of the sum.
                scale += n.abs() * (zero.abs() + 65_540.0 * step);
                spread += 1.5 * n.abs() * step;
                b += n * (zero + 32_768.5 * step);
            }
            if scale == 0.0 {
                // `0 · p + 0 >= 0` holds for every box.
                set.b[p] = 1.0;
            } else if !scale.is_finite() {
                // Never sure: every box goes to the exact test.
                set.slack[p] = f32::INFINITY;
            } else {
                set.a[p] =
                    core::array::from_fn(|axis| (normal[axis] * steps.step[axis] / scale) as f32);
                set.b[p] = (b / scale) as f32;
                set.slack[p] = ((spread / scale + SLACK) as f32).next_up();
            }
        }
        set
    }

    /// The `active` planes every point of `cell` is inside, by the
    /// region's own arithmetic: then some point of every box that meets
    /// the cell is inside them too, and its furthest corner evaluates no
    /// lower (each product and sum rounds monotonically).
    #[inline(always)]
    fn holding_all_of(&self, active: u8, (min, max): (DVec3, DVec3)) -> u8 {
        let mut holding = 0;
        let mut left = active;
        while left != 0 {
            let p = left.trailing_zeros();
            left &= left - 1;
            let plane = self.exact[p as usize];
            let normal = plane.truncate();
            let nearest = DVec3::select(normal.cmpge(DVec3::ZERO), min, max);
            if normal.dot(nearest) + plane.w >= 0.0 {
                holding |= 1 << p;
            }
        }
        holding
    }

    /// Plane `p`, scaled, at the furthest corner of the quantized box
    /// `(lo, hi)`.
    #[inline(always)]
    fn at(&self, p: usize, (lo, hi): Corners) -> f32 {
        let mut at = self.b[p];
        for axis in 0..3 {
            let c = if self.high[p][axis] { hi[axis] } else { lo[axis] };
            at += self.a[p][axis] * f32::from(c);
        }
        at
    }

    /// For the 16 slots at `chunk` of `leaf`, a bit each: the slots to
    /// look at (the quantized box meets the query's `query`, the leaf
    /// owns the box by its `owned` axes, and the box is not surely outside
    /// one of the `active` planes), and those too close to call (a plane
    /// passes within its slack of the furthest corner, or a corner lies at
    /// the border of the coordinates, where the box may reach any distance
    /// beyond it; such a box is never called outside). Padding lanes are
    /// the caller's to mask. The portable twin of the vector kernel.
    #[inline(always)]
    fn chunk16(
        &self,
        active: u8,
        leaf: &LeafView<'_>,
        chunk: usize,
        query: Corners,
        owned: i16,
    ) -> (u32, u32) {
        let mut look = leaf.meets_mask16(chunk, query);
        for lane in 0..16 {
            if owned | leaf.owned[chunk + lane] != i16::from(OWNS_PAIR) {
                look &= !(1 << lane);
            }
        }
        let mut close = 0u32;
        if look == 0 || active == 0 {
            return (look, close);
        }
        for lane in 0..16 {
            let corners = leaf.corners(chunk + lane);
            let (lo, hi) = corners;
            if lo.contains(&i16::MIN) || hi.contains(&i16::MAX) {
                close |= 1 << lane;
                continue;
            }
            let mut left = active;
            while left != 0 {
                let p = left.trailing_zeros() as usize;
                left &= left - 1;
                let at = self.at(p, corners);
                if at < -self.slack[p] {
                    look &= !(1 << lane);
                }
                close |= u32::from(at < self.slack[p]) << lane;
            }
        }
        (look, close)
    }
}

/// The world box of `cell` cut to `bounds`, in `f64`: every point the
/// quantizer puts in the cell that lies in `bounds`. Where the cut is
/// empty on an axis it is the end of the cell's span nearest the bounds:
/// a box that meets both the cell and the bounds holds that point on that
/// axis.
#[inline(always)]
fn cut_cell(cell: Cell, steps: &WorldSteps, bounds: &Aabb) -> (DVec3, DVec3) {
    let (mut min, mut max) = ([0.0; 3], [0.0; 3]);
    for axis in 0..3 {
        let (lo, hi) = cell.span(axis);
        let (low, high) = steps.span(axis, lo, hi);
        let (bound_min, bound_max) = (f64::from(bounds.min[axis]), f64::from(bounds.max[axis]));
        min[axis] = low.max(bound_min).min(high);
        max[axis] = high.min(bound_max).max(min[axis]);
    }
    (DVec3::from(min), DVec3::from(max))
}

impl AdaptiveGrid {
    /// [`query_with`](Self::query_with) for a region with a
    /// [`plane_test`](RegionTest::plane_test) of at most [`MAX_PLANES`]
    /// planes. Each box is reported by the one leaf that holds its
    /// reference point, as in the box query: no cell is skipped, since a
    /// box the conservative test accepts may lie only in cells outside one
    /// plane or another.
    ///
    /// A plane is dropped below a cell (cut to the bounds) that lies inside
    /// it: a box the walk finds there meets the cell, and if it meets the
    /// bounds too it meets the cut cell (on each axis, three spans that
    /// meet pairwise share a point), so it holds the plane. In a leaf with
    /// every plane dropped, a box is met exactly when it meets the bounds:
    /// the box query's test. Elsewhere the quantized boxes of 16 slots at a
    /// time decide the remaining planes, unless one passes within a few
    /// steps of a box's furthest corner; only those boxes, and boxes at the
    /// border of the coordinates, are tested by the region.
    pub(super) fn plane_walk(
        &self,
        region: &impl RegionTest,
        planes: &[DVec4],
        bounds: &Aabb,
        quantized: &Item,
        out: &mut Vec<u32>,
    ) {
        assert!(planes.len() <= MAX_PLANES, "more planes than mask bits");
        let set = PlaneSet::new(planes, &self.quantizer.world_steps());
        let all = ((1u16 << planes.len()) - 1) as u8;
        #[cfg(simd)]
        if let Some(avx2_popcnt) = self.kernel.avx2_popcnt() {
            // SAFETY: the token proves the CPU check passed.
            return unsafe {
                self.plane_walk_avx2(avx2_popcnt, region, &set, all, bounds, quantized, out)
            };
        }
        self.plane_walk_with(region, &set, all, bounds, quantized, out);
    }

    /// [`plane_walk_with`](Self::plane_walk_with) compiled for AVX2 and
    /// POPCNT (child indices are a population count per visited cell),
    /// which the token proves.
    #[cfg(simd)]
    #[target_feature(enable = "avx2,popcnt")]
    #[allow(clippy::too_many_arguments, reason = "the walk's arguments and the token")]
    fn plane_walk_avx2(
        &self,
        _: Avx2PopcntToken,
        region: &impl RegionTest,
        set: &PlaneSet,
        all: u8,
        bounds: &Aabb,
        quantized: &Item,
        out: &mut Vec<u32>,
    ) {
        self.plane_walk_with(region, set, all, bounds, quantized, out);
    }

    /// The descent, depth first with an explicit stack: every occupied
    /// child cell the bounds meet, with the planes its parent did not
    /// drop, then every leaf's slots.
    #[inline(always)]
    fn plane_walk_with(
        &self,
        region: &impl RegionTest,
        set: &PlaneSet,
        all: u8,
        bounds: &Aabb,
        quantized: &Item,
        out: &mut Vec<u32>,
    ) {
        let steps = self.quantizer.world_steps();
        let query_corners = corners_of(quantized);
        let nodes = &self.builder.nodes;
        // At most 63 siblings wait per level above the current node, each
        // with the planes still to test below it (a bit each); on the
        // stack, so a query allocates nothing.
        let mut stack = [(0u32, 0u8); 64 * LEVELS as usize];
        stack[0] = (0, all);
        let mut waiting = 1;
        while waiting > 0 {
            waiting -= 1;
            let (index, mut active) = stack[waiting];
            let node = &nodes[index as usize];
            if active != 0 {
                active &= !set.holding_all_of(active, cut_cell(node.cell, &steps, bounds));
            }
            if node.is_leaf() {
                let leaf = self.leaves.view(node.first as usize, node.count as usize);
                assert!(leaf.is_padded(), "leaf columns are not padded");
                let owned = i16::from(node.cell.owned_axes(quantized.lo));
                for chunk in (0..leaf.count).step_by(16) {
                    let (mut look, close) = match self.kernel {
                        #[cfg(simd)]
                        // SAFETY: the token proves the CPU check passed,
                        // the leaf's padding was just checked, and `chunk`
                        // is a multiple of 16 below its count.
                        Kernel::Avx2(avx2) => unsafe {
                            x86::chunk16_avx2(avx2, set, active, &leaf, chunk, query_corners, owned)
                        },
                        Kernel::Scalar => set.chunk16(active, &leaf, chunk, query_corners, owned),
                    };
                    if leaf.count < chunk + 16 {
                        look &= (1u32 << (leaf.count - chunk)) - 1;
                    }
                    while look != 0 {
                        let lane = look.trailing_zeros();
                        look &= look - 1;
                        let slot = chunk + lane as usize;
                        let id = leaf.ids[slot];
                        let aabb = &self.boxes[id as usize];
                        let met = if close & (1 << lane) != 0 {
                            region.meets(aabb)
                        } else {
                            surely_overlap(query_corners, leaf.corners(slot))
                                || aabb.overlaps(bounds)
                        };
                        if met {
                            out.push(id);
                        }
                    }
                }
                continue;
            }
            let Some(cells) = cells_met(node.block, quantized) else { continue };
            let mut visit = cells & node.occupancy;
            while visit != 0 {
                let cell = visit.trailing_zeros();
                visit &= visit - 1;
                let below = node.occupancy & ((1u64 << cell) - 1);
                stack[waiting] = (node.first + below.count_ones(), active);
                waiting += 1;
            }
        }
    }
}

#[cfg(simd)]
mod x86 {
    use super::{Corners, LeafView, OWNS_PAIR, PlaneSet};
    use crate::grid::cpu::Avx2Token;
    use std::arch::x86_64::*;

    /// [`PlaneSet::chunk16`] with the 16 slots as vectors: the same
    /// compares, and the same products and sums in the same order, so the
    /// same bits. Compiled for AVX2, which the token proves.
    ///
    /// # Safety
    /// The leaf's columns must be padded to a multiple of 16 slots
    /// ([`LeafView::is_padded`]), and `chunk` a multiple of 16 below its
    /// count.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn chunk16_avx2(
        _: Avx2Token,
        set: &PlaneSet,
        active: u8,
        leaf: &LeafView<'_>,
        chunk: usize,
        (query_lo, query_hi): Corners,
        owned: i16,
    ) -> (u32, u32) {
        let sixteen = |column: &[i16]| {
            debug_assert!(chunk + 16 <= column.len());
            // SAFETY: the caller keeps `chunk + 16` within the padded
            // column.
            unsafe { _mm256_loadu_si256(column.as_ptr().add(chunk).cast()) }
        };
        // One bit per 16-bit lane: narrow to bytes so movemask gives one
        // bit per lane.
        let lanes = |v: __m256i| {
            let packed =
                _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
            _mm_movemask_epi8(packed) as u32
        };
        let (lo, hi) = (leaf.lo.map(sixteen), leaf.hi.map(sixteen));
        let mut apart = _mm256_cmpeq_epi16(
            _mm256_or_si256(sixteen(leaf.owned), _mm256_set1_epi16(owned)),
            _mm256_set1_epi16(i16::from(OWNS_PAIR)),
        );
        apart = _mm256_xor_si256(apart, _mm256_set1_epi16(-1));
        for axis in 0..3 {
            let (q_lo, q_hi) =
                (_mm256_set1_epi16(query_lo[axis]), _mm256_set1_epi16(query_hi[axis]));
            apart = _mm256_or_si256(
                apart,
                _mm256_or_si256(
                    _mm256_cmpgt_epi16(lo[axis], q_hi),
                    _mm256_cmpgt_epi16(q_lo, hi[axis]),
                ),
            );
        }
        let look = !lanes(apart) & 0xFFFF;
        if look == 0 || active == 0 {
            return (look, 0);
        }
        let (min, max) = (_mm256_set1_epi16(i16::MIN), _mm256_set1_epi16(i16::MAX));
        let mut border = _mm256_setzero_si256();
        for axis in 0..3 {
            border = _mm256_or_si256(
                border,
                _mm256_or_si256(
                    _mm256_cmpeq_epi16(lo[axis], min),
                    _mm256_cmpeq_epi16(hi[axis], max),
                ),
            );
        }
        let floats = |v: __m256i| {
            [
                _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v))),
                _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256::<1>(v))),
            ]
        };
        let (lo, hi) = (lo.map(floats), hi.map(floats));
        let bits = |halves: [__m256; 2]| {
            (_mm256_movemask_ps(halves[0]) as u32) | (_mm256_movemask_ps(halves[1]) as u32) << 8
        };
        let (mut outside, mut close) = (0u32, 0u32);
        let mut left = active;
        while left != 0 {
            let p = left.trailing_zeros() as usize;
            left &= left - 1;
            let mut at = [_mm256_set1_ps(set.b[p]); 2];
            for axis in 0..3 {
                let a = _mm256_set1_ps(set.a[p][axis]);
                let c = if set.high[p][axis] { &hi[axis] } else { &lo[axis] };
                for half in 0..2 {
                    at[half] = _mm256_add_ps(at[half], _mm256_mul_ps(a, c[half]));
                }
            }
            let (above, below) = (_mm256_set1_ps(set.slack[p]), _mm256_set1_ps(-set.slack[p]));
            outside |= bits(at.map(|at| _mm256_cmp_ps::<_CMP_LT_OQ>(at, below)));
            close |= bits(at.map(|at| _mm256_cmp_ps::<_CMP_LT_OQ>(at, above)));
        }
        let border = lanes(border);
        (look & !(outside & !border), close | border)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::quantize::Quantizer;
    use broadphase_scenes::SplitMix64;
    use glam::Vec3;

    /// The region's test of one plane: the box's furthest corner inside.
    fn holds(plane: DVec4, aabb: &Aabb) -> bool {
        let normal = plane.truncate();
        let furthest =
            DVec3::select(normal.cmpge(DVec3::ZERO), aabb.max.as_dvec3(), aabb.min.as_dvec3());
        normal.dot(furthest) + plane.w >= 0.0
    }

    /// Where the quantized test calls a box, the exact test agrees: on
    /// boxes placed within a few steps of random planes of every scale.
    #[test]
    fn a_called_box_is_called_the_same_by_the_exact_test() {
        let mut rng = SplitMix64::new(41);
        let unit = |rng: &mut SplitMix64| rng.range_f32(-1.0, 1.0);
        let scene: Vec<Aabb> = (0..64)
            .map(|_| {
                let at = Vec3::new(unit(&mut rng), unit(&mut rng), unit(&mut rng)) * 500.0;
                Aabb::new(at, at + 1.0)
            })
            .collect();
        let quantizer = Quantizer::covering(&scene).unwrap();
        let (mut called, mut close) = (0, 0);
        for round in 0..2_000 {
            let normal = Vec3::new(unit(&mut rng), unit(&mut rng), unit(&mut rng));
            let through = Vec3::new(unit(&mut rng), unit(&mut rng), unit(&mut rng)) * 400.0;
            let scale = [1.0e-20f64, 1.0, 1.0e20][round % 3];
            let plane = (normal.extend(-normal.dot(through)).as_dvec4()) * scale;
            let set = PlaneSet::new(&[plane], &quantizer.world_steps());
            for _ in 0..50 {
                let offset = Vec3::new(unit(&mut rng), unit(&mut rng), unit(&mut rng));
                let min = through + offset * [0.05, 1.0, 20.0][rng.below(3)];
                let aabb = Aabb::new(min, min + Vec3::splat(rng.range_f32(0.0, 2.0)));
                let corners = corners_of(&quantizer.item(&aabb, 0));
                let at = set.at(0, corners);
                if at < -set.slack[0] {
                    assert!(!holds(plane, &aabb), "{plane} {aabb:?} called outside");
                    called += 1;
                } else if at >= set.slack[0] {
                    assert!(holds(plane, &aabb), "{plane} {aabb:?} called inside");
                    called += 1;
                } else {
                    close += 1;
                }
            }
        }
        // Most boxes are called, though a third lie within a few steps
        // of the plane: the slack is a few steps wide.
        assert!(called > 10 * close, "{called} called, {close} too close");
    }

    /// A plane that holds all of a cell cut to the bounds holds every box
    /// that meets both.
    #[test]
    fn a_plane_holding_a_cut_cell_holds_its_boxes() {
        let mut rng = SplitMix64::new(7);
        let scene = [Aabb::new(Vec3::ZERO, Vec3::splat(100.0))];
        let quantizer = Quantizer::covering(&scene).unwrap();
        let steps = quantizer.world_steps();
        let mut held = 0;
        for _ in 0..3_000 {
            let depth = 1 + rng.below(4) as u8;
            let prefix = [0; 3].map(|_: u16| rng.below(1 << (2 * depth)) as u16);
            let cell = Cell { prefix, depth };
            let lo = Vec3::new(
                rng.range_f32(-10.0, 110.0),
                rng.range_f32(-10.0, 110.0),
                rng.range_f32(-10.0, 110.0),
            );
            let bounds = Aabb::new(lo, lo + Vec3::splat(rng.range_f32(0.0, 60.0)));
            let normal = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            let plane = normal.extend(rng.range_f32(-100.0, 100.0)).as_dvec4();
            let set = PlaneSet::new(&[plane], &steps);
            if set.holding_all_of(1, cut_cell(cell, &steps, &bounds)) == 0 {
                continue;
            }
            held += 1;
            for _ in 0..20 {
                let min = lo
                    + Vec3::new(
                        rng.range_f32(-30.0, 60.0),
                        rng.range_f32(-30.0, 60.0),
                        rng.range_f32(-30.0, 60.0),
                    );
                let aabb = Aabb::new(min, min + Vec3::splat(rng.range_f32(0.0, 30.0)));
                let item = quantizer.item(&aabb, 0);
                let meets_cell = (0..3).all(|axis| {
                    let (c_lo, c_hi) = cell.span(axis);
                    u32::from(item.lo[axis]) <= c_hi && u32::from(item.hi[axis]) >= c_lo
                });
                if meets_cell && aabb.overlaps(&bounds) {
                    assert!(holds(plane, &aabb), "{plane} {aabb:?} {cell:?} {bounds:?}");
                }
            }
        }
        assert!(held > 100, "{held}");
    }
}
