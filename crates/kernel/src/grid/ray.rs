//! Rays against the kept build: front to back through the occupied cells,
//! nearest cell first, stopping once no cell left can hold a nearer hit.

use super::quantize::{Cell, Item, LEVELS};
use super::query::{cells_met, leaf_hits};
use super::split::child_cell;
use super::tree::AdaptiveGrid;
use broadphase_storage::{QueryError, Ray};

/// The ray in `f64`, with the grid's quantization, for slab tests against
/// cells and for the box it sweeps through them.
struct Slabs {
    origin: [f64; 3],
    dir: [f64; 3],
    /// `1 / dir` per axis where the ray moves: finite, not 0.
    inverse: [f64; 3],
    moves: [bool; 3],
    max_t: f64,
    /// World position of quantized coordinate 0, and of one step.
    coordinate_origin: [f64; 3],
    step: [f64; 3],
}

/// Past this distance from the quantizer's origin, `x - origin` overflows
/// in `f32` and the point clamps to the last coordinate, whatever the
/// scale (a little short of `f32::MAX`, for the rounding).
const OVERFLOW: f64 = f32::MAX as f64 * (1.0 - 1.0 / 1024.0);

impl Slabs {
    fn of(ray: &Ray, grid: &AdaptiveGrid) -> Self {
        let (origin, scale) = grid.quantizer.origin_and_scale();
        let dir = ray.dir.to_array().map(f64::from);
        Slabs {
            origin: ray.origin.to_array().map(f64::from),
            dir,
            inverse: dir.map(|d| 1.0 / d),
            moves: dir.map(|d| d != 0.0),
            max_t: f64::from(ray.max_t),
            coordinate_origin: origin.map(f64::from),
            step: scale.map(|s| 1.0 / f64::from(s)),
        }
    }

    /// Where the ray enters and leaves a cell's world box, or `None` if it
    /// misses it. The box holds every point the quantizer puts in the cell:
    /// it is widened by a step on each side (the quantizer rounds in
    /// `f32`), and a cell at the border of the coordinates is open on that
    /// side (points beyond the build's bounds clamp into it, and so do
    /// points whose offset from the origin overflows `f32`).
    #[inline]
    fn through(&self, cell: Cell) -> Option<(f64, f64)> {
        let (mut first, mut last) = (0.0f64, self.max_t);
        for axis in 0..3 {
            let (lo, hi) = cell.span(axis);
            let (zero, step) = (self.coordinate_origin[axis], self.step[axis]);
            let mut min =
                if lo == 0 { f64::NEG_INFINITY } else { zero + (f64::from(lo) - 1.0) * step };
            let mut max =
                if hi >= 65535 { f64::INFINITY } else { zero + (f64::from(hi) + 2.0) * step };
            if hi >= 65535 {
                min = min.min(zero + OVERFLOW);
            }
            if lo == 0 {
                max = max.max(zero - OVERFLOW);
            }
            let at = self.origin[axis];
            if self.moves[axis] {
                // No NaN: the inverse is finite and not 0, the bounds are
                // finite or infinite, never both with 0.
                let (a, b) = ((min - at) * self.inverse[axis], (max - at) * self.inverse[axis]);
                let (near, far) = if a <= b { (a, b) } else { (b, a) };
                first = first.max(near);
                last = last.min(far);
            } else if at < min || at > max {
                return None;
            }
        }
        (first <= last).then_some((first, last))
    }

    /// The quantized box of the points the ray passes between `first` and
    /// `last`: their world box rounded outward to `f32` (a step of `f32`
    /// more, for the `f64` rounding), then quantized as boxes are, so that
    /// every such point's coordinates lie in it.
    #[inline]
    fn swept(&self, first: f64, last: f64, grid: &AdaptiveGrid) -> Item {
        let mut item = Item::default();
        for axis in 0..3 {
            let at = self.origin[axis];
            let (a, b) = if self.moves[axis] {
                let d = self.dir[axis];
                // `last` may be +inf (a ray with no end through an open
                // cell): the product is then infinite, never NaN.
                let (a, b) = (at + first * d, at + last * d);
                if a <= b { (a, b) } else { (b, a) }
            } else {
                (at, at)
            };
            item.lo[axis] = grid.quantizer.coord(axis, down(a).next_down());
            item.hi[axis] = grid.quantizer.coord(axis, up(b).next_up());
        }
        item
    }
}

/// `x` rounded up to an `f32`.
#[inline]
fn up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x { y.next_up() } else { y }
}

/// `x` rounded down to an `f32`: a cell's entry kept on the stack, never
/// above the exact one.
#[inline]
fn down(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) > x { y.next_down() } else { y }
}

impl AdaptiveGrid {
    /// The first box `ray` hits, with where it enters it: the smallest
    /// [`Ray::entry`] (an `f32`) of every kept box, ties to the smaller
    /// index. Cells
    /// are visited nearest first and a cell is skipped once it starts
    /// beyond the best hit so far.
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
        self.cast_ray_by(ray, |id| ray.entry(&self.boxes[id as usize]))
    }

    /// [`cast_ray`](Self::cast_ray) with the caller's test: `entry(id)` is
    /// where the ray enters the caller's own box for kept box `id`, or
    /// `None` to skip it (a miss, or a box the caller leaves out). The
    /// caller's box must lie inside kept box `id` (an index of enlarged
    /// boxes answering for the true ones), so that the cells the walk skips
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
    /// let hit = grid.cast_ray_by(&ray, |id| if id == 3 { None } else { ray.entry(&boxes[id as usize]) })?;
    /// assert_eq!(hit, Some((4, 4.5)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_ray_by(
        &self,
        ray: &Ray,
        mut entry: impl FnMut(u32) -> Option<f32>,
    ) -> Result<Option<(u32, f32)>, QueryError> {
        ray.validate()?;
        let mut best: Option<(f32, u32)> = None;
        self.walk_ray(ray, |id| {
            if let Some(t) = entry(id)
                && best.is_none_or(|(best_t, best_id)| (t, id) < (best_t, best_id))
            {
                best = Some((t, id));
            }
            // Every exact entry that rounds to the best `t` lies below the
            // next `f32`: cells that start at or past it cannot win.
            best.map(|(t, _)| f64::from(t.next_up()))
        });
        Ok(best.map(|(t, id)| (id, t)))
    }

    /// Every box `ray` hits, as `(index, entry t)` ([`Ray::entry`]), into
    /// `out` (cleared first), sorted by `t`, ties by index, each box once.
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
        self.ray_hits_by(ray, |id| ray.entry(&self.boxes[id as usize]), out)
    }

    /// [`ray_hits`](Self::ray_hits) with the caller's test, as in
    /// [`cast_ray_by`](Self::cast_ray_by).
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract; `out` is then empty.
    pub fn ray_hits_by(
        &self,
        ray: &Ray,
        mut entry: impl FnMut(u32) -> Option<f32>,
        out: &mut Vec<(u32, f32)>,
    ) -> Result<(), QueryError> {
        out.clear();
        ray.validate()?;
        self.walk_ray(ray, |id| {
            if let Some(t) = entry(id) {
                out.push((id, t));
            }
            None
        });
        // A box lies in every leaf it overlaps: the same box, the same t.
        out.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out.dedup_by_key(|&mut (id, _)| id);
        Ok(())
    }

    /// Calls `visit(id)` for every kept box in the leaves the ray visits
    /// whose quantized box meets what the ray sweeps there (a box once per
    /// such leaf). `visit` returns the `t` at or beyond which no hit
    /// matters any more, if any: cells that start there or later are
    /// skipped.
    fn walk_ray(&self, ray: &Ray, mut visit: impl FnMut(u32) -> Option<f64>) {
        if !self.kept || self.builder.nodes.is_empty() {
            return;
        }
        let slabs = Slabs::of(ray, self);
        let nodes = &self.builder.nodes;
        // Nodes waiting, with where the ray enters them (rounded down).
        let mut stack = [(0u32, 0.0f32); 64 * LEVELS as usize];
        let mut waiting = 1; // the root, entered at 0
        let mut enough: Option<f64> = None;
        let mut children = [(0.0f32, 0u32); 64];
        while waiting > 0 {
            waiting -= 1;
            let (index, entry) = stack[waiting];
            // Checked again now: the best hit may have come nearer since.
            if enough.is_some_and(|limit| f64::from(entry) >= limit) {
                continue;
            }
            let node = &nodes[index as usize];
            // The box the ray sweeps through this node, up to the best hit:
            // only children and boxes that meet it can hold a nearer hit.
            // (A box reaching outside the node is hit there, if not here,
            // and lies in the leaf there too.)
            let Some((first, last)) = slabs.through(node.cell) else { continue };
            let last = enough.map_or(last, |limit| last.min(limit));
            let swept = slabs.swept(first, last, self);
            if node.is_leaf() {
                let leaf = self.leaves.view(node.first as usize, node.count as usize);
                leaf_hits(self.kernel, &leaf, &swept, &mut |slot| {
                    enough = visit(leaf.ids[slot]).or(enough);
                });
                continue;
            }
            let Some(met) = cells_met(node.block, &swept) else { continue };
            let mut candidates = met & node.occupancy;
            let mut count = 0;
            while candidates != 0 {
                let cell = candidates.trailing_zeros();
                candidates &= candidates - 1;
                if let Some((entry, _)) = slabs.through(child_cell(node.block, cell as usize))
                    && enough.is_none_or(|limit| entry < limit)
                {
                    let rank = (node.occupancy & ((1u64 << cell) - 1)).count_ones();
                    children[count] = (down(entry), node.first + rank);
                    count += 1;
                }
            }
            // Nearest popped first.
            let children = &mut children[..count];
            children.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            for &(entry, child) in children.iter() {
                stack[waiting] = (child, entry);
                waiting += 1;
            }
        }
    }
}
