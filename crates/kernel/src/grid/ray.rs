//! Rays against the kept build: first hits through the rays' own tree
//! (`ray_tree`), all hits front to back through the occupied cells.

use super::config::RayDedup;
use super::hierarchy::AdaptiveGrid;
use super::leaf::{Corners, unflip};
use super::quantize::{Cell, Item, LEVELS, WorldSteps};
use super::query::leaf_hits;
use super::split::AXIS_CELLS;
use broadphase_storage::{Aabb, FastUnique, QueryError, Ray};
use core::mem::MaybeUninit;

/// Distinct boxes an all-hits ray remembers with [`RayDedup::FastUnique`]:
/// 16 `u32`, one AVX2 compare pair (four SSE2 ones) per box met.
const RAY_SEEN: usize = 16;

/// A node waiting to be visited, with where the ray enters and leaves it.
#[derive(Clone, Copy, Debug, Default)]
struct Waiting {
    node: u32,
    entry: f64,
    exit: f64,
}

/// The ray in `f64`, with the grid's quantization, for slab tests against
/// cells and for the box it sweeps through them.
struct Slabs {
    origin: [f64; 3],
    /// `1 / dir` per axis where the ray moves: finite, not 0.
    inverse: [f64; 3],
    moves: [bool; 3],
    max_t: f64,
    /// The quantizer's coordinates in world units.
    steps: WorldSteps,
    /// The origin's offset from the quantizer's origin, and the direction:
    /// the ray's point at `t` is `offset + t * dir` from that origin.
    offset: [f64; 3],
    dir: [f64; 3],
}

/// The relative error the walk allows for in every `t` and every point it
/// computes, far above the few roundings of `f64` each one takes
/// (2^-52 each). The exact test [`Ray::entry`] rounds too: a ray from
/// 1e30 meets boxes near 0 at `t` values equal to 16 digits, and every box
/// that test calls hit must be visited, so the walk's bounds are widened
/// by this much of their size rather than trusted to the last bit.
const SLACK: f64 = 1.0 / (1u64 << 46) as f64;

/// `t` moved away from the interval's inside by the allowed error.
#[inline(always)]
fn earlier(t: f64) -> f64 {
    t - t.abs() * SLACK
}

#[inline(always)]
fn later(t: f64) -> f64 {
    t + t.abs() * SLACK
}

/// Where the ray enters and leaves the four cells of a block along one
/// axis (`near[k]`, `far[k]` for the cells whose coordinate on the axis
/// is `k`), unclamped: `-inf`/`+inf` where it never leaves, the reverse
/// where it never enters.
type AxisSpans = ([f64; 4], [f64; 4]);

impl Slabs {
    fn of(ray: &Ray, grid: &AdaptiveGrid) -> Self {
        let steps = grid.quantizer.world_steps();
        let dir = ray.dir.to_array().map(f64::from);
        let origin = ray.origin.to_array().map(f64::from);
        Slabs {
            origin,
            inverse: dir.map(|d| 1.0 / d),
            moves: dir.map(|d| d != 0.0),
            max_t: f64::from(ray.max_t),
            offset: [0, 1, 2].map(|a| origin[a] - steps.zero[a]),
            dir,
            steps,
        }
    }

    /// Where the ray enters and leaves the slab `min..=max` on `axis`:
    /// `(-inf, inf)` if it stays inside, `(inf, -inf)` if it never enters.
    #[inline(always)]
    fn crossing(&self, axis: usize, (min, max): (f64, f64)) -> (f64, f64) {
        let at = self.origin[axis];
        if self.moves[axis] {
            // No NaN: the inverse is finite and not 0, the bounds are
            // finite or infinite, never both with 0.
            let (a, b) = ((min - at) * self.inverse[axis], (max - at) * self.inverse[axis]);
            (a.min(b), a.max(b))
        } else if at < min || at > max {
            (f64::INFINITY, f64::NEG_INFINITY)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    }

    /// Where the ray enters and leaves a cell's world box
    /// ([`WorldSteps::span`]), widened by the allowed error, or `None` if it
    /// misses it.
    fn through(&self, cell: Cell) -> Option<(f64, f64)> {
        let (mut first, mut last) = (0.0f64, self.max_t);
        for axis in 0..3 {
            let (lo, hi) = cell.span(axis);
            let (near, far) = self.crossing(axis, self.steps.span(axis, lo, hi));
            first = first.max(near);
            last = last.min(far);
        }
        let (first, last) = (earlier(first), later(last));
        (first <= last).then_some((first, last))
    }

    /// Whether the ray passes, between `first` and `last` (with the
    /// allowed error), through the world span of a quantized box as its
    /// leaf stores it: false only for boxes it cannot hit there.
    #[inline(always)]
    fn meets(&self, (lo, hi): Corners, first: f64, last: f64) -> bool {
        let (mut entry, mut exit) = (first, last);
        for axis in 0..3 {
            let (lo, hi) = (u32::from(unflip(lo[axis])), u32::from(unflip(hi[axis])));
            let (near, far) = self.crossing(axis, self.steps.span(axis, lo, hi));
            entry = larger(entry, near);
            exit = smaller(exit, far);
        }
        earlier(entry) <= later(exit)
    }

    /// [`crossing`](Self::crossing) for each of the four cells of `block`
    /// along `axis`, widened by the allowed error.
    #[inline(always)]
    fn spans(&self, block: Cell, axis: usize) -> AxisSpans {
        let shift = block.shift();
        let base = u32::from(block.prefix[axis]);
        let (mut near, mut far) = ([0.0; 4], [0.0; 4]);
        for k in 0..4 {
            let lo = (base + k as u32) << shift;
            let hi = lo + ((1u32 << shift) - 1);
            (near[k], far[k]) = self.crossing(axis, self.steps.span(axis, lo, hi));
        }
        for k in 0..4 {
            near[k] = earlier(near[k]);
            far[k] = later(far[k]);
        }
        (near, far)
    }

    /// The quantized box of the points the ray passes between `first` and
    /// `last`, widened by the quantizer's rounding (a step) and by the
    /// allowed error of the `f64` arithmetic, so that every box the ray
    /// meets there has coordinates in it.
    #[inline(always)]
    fn swept(&self, first: f64, last: f64) -> Item {
        let mut item = Item::default();
        for axis in 0..3 {
            let at = self.offset[axis];
            // The ends' offsets from the quantizer's origin, lowest first.
            let (low, high) = if self.moves[axis] {
                let d = self.dir[axis];
                // `last` may be +inf (a ray with no end through an open
                // cell): the product is then infinite, never NaN.
                let (a, b) = (at + first * d, at + last * d);
                let error = |t: f64| (at.abs() + (t * d).abs()) * SLACK;
                if a <= b {
                    (a - error(first), b + error(last))
                } else {
                    (b - error(last), a + error(first))
                }
            } else {
                (at, at)
            };
            (item.lo[axis], item.hi[axis]) = self.steps.coords_of_offsets(axis, low, high, 2.0);
        }
        item
    }
}

/// The larger of two `t` values that are never NaN: one `maxsd`, where
/// `f64::max` adds the NaN handling.
#[inline(always)]
fn larger(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// The smaller of two `t` values that are never NaN.
#[inline(always)]
fn smaller(a: f64, b: f64) -> f64 {
    if a < b { a } else { b }
}

/// Where the four cells along each axis lie on a 64-cell mask:
/// `ALONG[axis][set]` holds every cell whose coordinate `k` on `axis` has
/// bit `k` of `set` — the union of the split's one-coordinate masks.
const ALONG: [[u64; 16]; 3] = {
    let mut table = [[0u64; 16]; 3];
    let mut axis = 0;
    while axis < 3 {
        let mut set = 0;
        while set < 16 {
            let mut k = 0;
            while k < 4 {
                if set >> k & 1 == 1 {
                    table[axis][set] |= AXIS_CELLS[axis][k][k];
                }
                k += 1;
            }
            set += 1;
        }
        axis += 1;
    }
    table
};

impl AdaptiveGrid {
    /// The first box `ray` hits, with where it enters it: the smallest
    /// [`Ray::entry`] (an `f32`) of every kept box, ties to the smaller
    /// index. Casts walk the build's cells, nearest first, until their
    /// walks have done about the work of building the rays' own tree of
    /// box hulls; they then build it (kept until the next build; or at
    /// once with [`prepare_rays`](Self::prepare_rays)), and walk its nodes
    /// nearest first. Either way a cell or node that starts beyond the
    /// best hit so far is skipped.
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract ([`Ray::validate`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..10).map(|i| Aabb::new(Vec3::new(i as f32 * 3.0, 0.0, 0.0), Vec3::new(i as f32 * 3.0 + 1.0, 1.0, 1.0))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let ray = Ray::new(Vec3::new(7.5, 0.5, 0.5), Vec3::X, f32::INFINITY);
    /// assert_eq!(grid.cast_ray(&ray)?, Some((3, 1.5)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_ray(&self, ray: &Ray) -> Result<Option<(u32, f32)>, QueryError> {
        // The tree's leaves hold the boxes' own bounds: no load from the
        // kept boxes.
        self.first_hit(ray, |_, kept| ray.entry(kept))
    }

    /// [`cast_ray`](Self::cast_ray) with the caller's test: `entry(id)` is
    /// where the ray enters the caller's own box for kept box `id`, or
    /// `None` to skip it (a miss, or a box the caller leaves out). The
    /// caller's box must lie inside kept box `id` (an index of enlarged
    /// boxes answering for the true ones), so that the nodes the walk skips
    /// cannot hold a nearer hit.
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..10).map(|i| Aabb::new(Vec3::new(i as f32 * 3.0, 0.0, 0.0), Vec3::new(i as f32 * 3.0 + 1.0, 1.0, 1.0))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let ray = Ray::new(Vec3::new(7.5, 0.5, 0.5), Vec3::X, f32::INFINITY);
    /// // Skip box 3 (the shooter, say).
    /// let hit = grid.cast_ray_where(&ray, |id| if id == 3 { None } else { ray.entry(&boxes[id as usize]) })?;
    /// assert_eq!(hit, Some((4, 4.5)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_ray_where(
        &self,
        ray: &Ray,
        mut entry: impl FnMut(u32) -> Option<f32>,
    ) -> Result<Option<(u32, f32)>, QueryError> {
        self.first_hit(ray, |id, _| entry(id))
    }

    /// The first hit: through the rays' tree once this build has one (or
    /// once the cell walks since the build have done the work of building
    /// it, see [`RayTreeCell::note_walk`]), through the cells until then.
    fn first_hit(
        &self,
        ray: &Ray,
        mut entry: impl FnMut(u32, &Aabb) -> Option<f32>,
    ) -> Result<Option<(u32, f32)>, QueryError> {
        ray.validate()?;
        if !self.kept {
            return Ok(None);
        }
        let tree = match self.ray_tree.built() {
            Some(tree) => tree,
            None if self.ray_tree.paid_for(self.boxes.len()) => self.ray_tree.get(&self.boxes),
            None => {
                let mut best: Option<(f32, u32)> = None;
                let examined = self.walk_ray(ray, |id| {
                    if let Some(t) = entry(id, &self.boxes[id as usize])
                        && best.is_none_or(|(best_t, best_id)| (t, id) < (best_t, best_id))
                    {
                        best = Some((t, id));
                    }
                    // Every exact entry that rounds to the best `t` lies
                    // below the next `f32`: cells that start at or past it
                    // cannot win.
                    best.map(|(t, _)| f64::from(t.next_up()))
                });
                self.ray_tree.note_walk(examined);
                return Ok(best.map(|(t, id)| (id, t)));
            }
        };
        #[cfg(simd)]
        if let Some(avx2) = self.kernel.avx2() {
            // SAFETY: the token proves the CPU check passed.
            let best = unsafe { tree.first_hit_avx2(avx2, ray, entry) };
            return Ok(best.map(|(t, id)| (id, t)));
        }
        Ok(tree.first_hit(ray, entry).map(|(t, id)| (id, t)))
    }

    /// Builds the rays' tree of this build now, unless it has one: the
    /// tree first-hit casts walk (see [`cast_ray`](Self::cast_ray)).
    /// Without this call a build's casts walk its cells until they have
    /// done about the work of building the tree, then build it: call it
    /// after a build that many rays will be cast through, to have every
    /// one of them take the tree.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> = (0..100).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 0.5))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// assert!(!grid.has_ray_tree());
    /// grid.prepare_rays();
    /// assert!(grid.has_ray_tree());
    /// let hit = grid.cast_ray(&Ray::new(Vec3::splat(-1.0), Vec3::ONE.normalize(), f32::INFINITY))?;
    /// assert_eq!(hit.map(|(id, _)| id), Some(0));
    /// grid.build(&boxes)?; // a build drops the tree
    /// assert!(!grid.has_ray_tree());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prepare_rays(&self) {
        if self.kept {
            self.ray_tree.get(&self.boxes);
        }
    }

    /// Whether this build's rays' tree is built (by
    /// [`prepare_rays`](Self::prepare_rays), or by casts that paid for it).
    pub fn has_ray_tree(&self) -> bool {
        self.ray_tree.built().is_some()
    }

    /// Every box `ray` hits, as `(index, entry t)` ([`Ray::entry`]), into
    /// `out` (cleared first), sorted by `t`, ties by index, each box once
    /// (the config's [`RayDedup`] picks how the copies of a box in several
    /// leaves are dropped).
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..10).map(|i| Aabb::new(Vec3::new(i as f32 * 3.0, 0.0, 0.0), Vec3::new(i as f32 * 3.0 + 1.0, 1.0, 1.0))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut hits = Vec::new();
    /// grid.ray_hits(&Ray::new(Vec3::new(7.5, 0.5, 0.5), Vec3::X, 6.5), &mut hits)?;
    /// assert_eq!(hits, [(3, 1.5), (4, 4.5)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ray_hits(&self, ray: &Ray, out: &mut Vec<(u32, f32)>) -> Result<(), QueryError> {
        // Called from both ways' walks: inlined into each, as it was when
        // there was one.
        self.ray_hits_where(
            ray,
            #[inline(always)]
            |id| ray.entry(&self.boxes[id as usize]),
            out,
        )
    }

    /// [`ray_hits`](Self::ray_hits) with the caller's test, as in
    /// [`cast_ray_where`](Self::cast_ray_where). `entry` may be called more than
    /// once for a box (once per leaf that holds it with
    /// [`RayDedup::Sort`]), and must give the same answer each time.
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract; `out` is then empty.
    pub fn ray_hits_where(
        &self,
        ray: &Ray,
        mut entry: impl FnMut(u32) -> Option<f32>,
        out: &mut Vec<(u32, f32)>,
    ) -> Result<(), QueryError> {
        out.clear();
        ray.validate()?;
        // A box lies in every leaf it overlaps: the ray may meet it again.
        let copies = match self.config.ray_dedup {
            RayDedup::Sort => {
                self.walk_ray(ray, |id| {
                    if let Some(t) = entry(id) {
                        out.push((id, t));
                    }
                    None
                });
                true
            }
            RayDedup::FastUnique => {
                let mut seen = FastUnique::<RAY_SEEN>::new();
                self.walk_ray(ray, |id| {
                    // `Some(false)`: met before, tested then. `None`: the
                    // set is full, the pass below drops the copies.
                    if seen.try_insert(id) != Some(false)
                        && let Some(t) = entry(id)
                    {
                        out.push((id, t));
                    }
                    None
                });
                seen.len() == RAY_SEEN
            }
        };
        // The copies of a box have the same t: sorted, they are neighbours.
        out.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        if copies {
            out.dedup_by_key(|&mut (id, _)| id);
        }
        Ok(())
    }

    /// The old name of [`cast_ray_where`](Self::cast_ray_where), kept one
    /// release.
    ///
    /// # Errors
    /// As [`cast_ray_where`](Self::cast_ray_where).
    #[deprecated(since = "0.1.0", note = "renamed to `cast_ray_where`")]
    pub fn cast_ray_by(
        &self,
        ray: &Ray,
        entry: impl FnMut(u32) -> Option<f32>,
    ) -> Result<Option<(u32, f32)>, QueryError> {
        self.cast_ray_where(ray, entry)
    }

    /// The old name of [`ray_hits_where`](Self::ray_hits_where), kept one
    /// release.
    ///
    /// # Errors
    /// As [`ray_hits_where`](Self::ray_hits_where).
    #[deprecated(since = "0.1.0", note = "renamed to `ray_hits_where`")]
    pub fn ray_hits_by(
        &self,
        ray: &Ray,
        entry: impl FnMut(u32) -> Option<f32>,
        out: &mut Vec<(u32, f32)>,
    ) -> Result<(), QueryError> {
        self.ray_hits_where(ray, entry, out)
    }

    /// Calls `visit(id)` for every kept box in the leaves the ray visits
    /// whose quantized box meets what the ray sweeps there (a box once per
    /// such leaf). `visit` returns the `t` at or beyond which no hit
    /// matters any more, if any: cells that start there or later are
    /// skipped. Returns how many boxes the visited leaves hold (the walk's
    /// work, which decides when the rays' tree pays).
    fn walk_ray(&self, ray: &Ray, visit: impl FnMut(u32) -> Option<f64>) -> usize {
        #[cfg(simd)]
        if let Some(avx2_popcnt) = self.kernel.avx2_popcnt() {
            // SAFETY: the token proves the CPU check passed.
            return unsafe { self.walk_ray_avx2(avx2_popcnt, ray, visit) };
        }
        self.walk_ray_with(ray, visit)
    }

    /// [`walk_ray_with`](Self::walk_ray_with) compiled for AVX2 and POPCNT
    /// (a child's index is a population count; the slab tests of four
    /// cells fit one register), which the token proves.
    #[cfg(simd)]
    #[target_feature(enable = "avx2,popcnt")]
    fn walk_ray_avx2(
        &self,
        _: super::cpu::Avx2PopcntToken,
        ray: &Ray,
        visit: impl FnMut(u32) -> Option<f64>,
    ) -> usize {
        self.walk_ray_with(ray, visit)
    }

    /// The walk itself, depth first, nearest child first.
    #[inline(always)]
    fn walk_ray_with(&self, ray: &Ray, mut visit: impl FnMut(u32) -> Option<f64>) -> usize {
        if !self.kept || self.builder.nodes.is_empty() {
            return 0;
        }
        let slabs = Slabs::of(ray, self);
        let nodes = &self.builder.nodes;
        let Some((first, last)) = slabs.through(nodes[0].cell) else { return 0 };
        // Nodes waiting, with where the ray enters and leaves them (rounded
        // outward to `f32`). At most 63 siblings wait per level above the
        // current node. Left uninitialised: zeroing it would cost more than
        // a short ray.
        let mut stack = [const { MaybeUninit::<Waiting>::uninit() }; 64 * LEVELS as usize];
        stack[0].write(Waiting { node: 0, entry: first, exit: last });
        let mut waiting = 1;
        let mut enough: Option<f64> = None;
        let mut examined = 0;
        let mut children = [Waiting::default(); 64];
        while waiting > 0 {
            waiting -= 1;
            // SAFETY: slots below `waiting` were all written: slot 0 above,
            // every other by the push that raised `waiting` past it.
            let popped = unsafe { stack[waiting].assume_init() };
            let (first, mut last) = (popped.entry, popped.exit);
            // Checked again now: the best hit may have come nearer since.
            if let Some(limit) = enough {
                if first >= limit {
                    continue;
                }
                last = last.min(limit);
            }
            let node = &nodes[popped.node as usize];
            if node.is_leaf() {
                // Only boxes that meet what the ray sweeps through the leaf
                // up to the best hit can hold a nearer hit. (A box reaching
                // outside the leaf is hit there, if not here, and lies in
                // the leaf there too.)
                let swept = slabs.swept(first, last);
                let leaf = self.leaves.view(node.first as usize, node.count as usize);
                examined += node.count as usize;
                leaf_hits(self.kernel, &leaf, &swept, &mut |slot| {
                    // The slot's quantized box is read already; the box
                    // itself is a load from anywhere in the build. Most
                    // boxes in the swept box are beside the ray.
                    let upto = enough.map_or(last, |limit| smaller(last, limit));
                    if slabs.meets(leaf.corners(slot), first, upto) {
                        enough = visit(leaf.ids[slot]).or(enough);
                    }
                });
                continue;
            }
            let spans = [
                slabs.spans(node.block, 0),
                slabs.spans(node.block, 1),
                slabs.spans(node.block, 2),
            ];
            // The cells whose slab on every axis the ray crosses between
            // `first` and `last`; of those, the occupied ones it enters.
            let mut met = !0u64;
            for (axis, (near, far)) in spans.iter().enumerate() {
                let mut set = 0;
                for k in 0..4 {
                    set |= usize::from(near[k] <= last && far[k] >= first) << k;
                }
                met &= ALONG[axis][set];
            }
            let mut candidates = met & node.occupancy;
            let mut count = 0;
            while candidates != 0 {
                let cell = candidates.trailing_zeros();
                candidates &= candidates - 1;
                let (x, y, z) = (cell as usize & 3, (cell as usize >> 2) & 3, cell as usize >> 4);
                let entry =
                    larger(larger(first, spans[0].0[x]), larger(spans[1].0[y], spans[2].0[z]));
                let exit =
                    smaller(smaller(last, spans[0].1[x]), smaller(spans[1].1[y], spans[2].1[z]));
                // Written always, kept if entered: whether the ray enters
                // is a coin toss for the branch predictor.
                let rank = (node.occupancy & ((1u64 << cell) - 1)).count_ones();
                children[count] = Waiting { node: node.first + rank, entry, exit };
                count += usize::from(entry <= exit);
            }
            // Nearest popped first.
            let children = &mut children[..count];
            children.sort_unstable_by(|a, b| b.entry.total_cmp(&a.entry));
            for child in children.iter() {
                stack[waiting].write(*child);
                waiting += 1;
            }
        }
        examined
    }
}
