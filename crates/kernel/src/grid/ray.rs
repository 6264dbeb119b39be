//! Rays against the kept build: front to back through the occupied cells,
//! nearest cell first, stopping once no cell left can hold a nearer hit.

use super::quantize::{Cell, LEVELS};
use super::split::child_cell;
use super::tree::AdaptiveGrid;
use broadphase_storage::{QueryError, Ray};

/// A ray in `f64`, ready for slab tests against cells.
struct Slabs {
    origin: [f64; 3],
    /// `1 / dir` per axis, finite for every non-zero `f32` direction; unused
    /// where `dir` is 0.
    inverse: [f64; 3],
    moves: [bool; 3],
    max_t: f64,
}

impl Slabs {
    fn of(ray: &Ray) -> Self {
        Slabs {
            origin: ray.origin.to_array().map(f64::from),
            inverse: ray.dir.to_array().map(|d| 1.0 / f64::from(d)),
            moves: ray.dir.to_array().map(|d| d != 0.0),
            max_t: f64::from(ray.max_t),
        }
    }
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
        ray.validate()?;
        let mut best: Option<(f32, u32)> = None;
        self.walk_ray(ray, |t, id| {
            if best.is_none_or(|(best_t, best_id)| (t, id) < (best_t, best_id)) {
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
        out.clear();
        ray.validate()?;
        self.walk_ray(ray, |t, id| {
            out.push((id, t));
            None
        });
        // A box lies in every leaf it overlaps: the same box, the same t.
        out.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out.dedup_by_key(|&mut (id, _)| id);
        Ok(())
    }

    /// Calls `hit(t, id)` for every kept box the ray hits in the leaves it
    /// visits (a box once per leaf it lies in), `t` its [`Ray::entry`].
    /// `hit` returns the `t` at or beyond which no hit matters any more, if
    /// any: cells that start there or later are skipped.
    fn walk_ray(&self, ray: &Ray, mut hit: impl FnMut(f32, u32) -> Option<f64>) {
        if !self.kept || self.builder.nodes.is_empty() {
            return;
        }
        let slabs = Slabs::of(ray);
        let nodes = &self.builder.nodes;
        let mut stack = [0u32; 64 * LEVELS as usize];
        let mut waiting = 1; // the root, at 0
        let mut enough: Option<f64> = None;
        let mut children = [(0.0f64, 0u32); 64];
        while waiting > 0 {
            waiting -= 1;
            let node = &nodes[stack[waiting] as usize];
            // Tested again now: the best hit may have come nearer since.
            match self.cell_entry(node.cell, &slabs) {
                Some(entry) if enough.is_none_or(|limit| entry < limit) => {}
                _ => continue,
            }
            if node.is_leaf() {
                let leaf = self.leaves.view(node.first as usize, node.count as usize);
                for &id in &leaf.ids[..leaf.count] {
                    if let Some(t) = ray.entry(&self.boxes[id as usize]) {
                        enough = hit(t, id).or(enough);
                    }
                }
                continue;
            }
            // The occupied children the ray meets, farthest pushed first.
            let mut count = 0;
            let mut occupied = node.occupancy;
            let mut rank = 0;
            while occupied != 0 {
                let cell = occupied.trailing_zeros();
                occupied &= occupied - 1;
                let child = child_cell(node.block, cell as usize);
                if let Some(entry) = self.cell_entry(child, &slabs)
                    && enough.is_none_or(|limit| entry < limit)
                {
                    children[count] = (entry, node.first + rank);
                    count += 1;
                }
                rank += 1;
            }
            let children = &mut children[..count];
            children.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            for &(_, child) in children.iter() {
                stack[waiting] = child;
                waiting += 1;
            }
        }
    }

    /// Where the ray enters the cell's world box (widened by a step, open
    /// at the build's borders), or `None` if it misses it.
    #[inline]
    fn cell_entry(&self, cell: Cell, slabs: &Slabs) -> Option<f64> {
        let (mut first, mut last) = (0.0f64, slabs.max_t);
        for axis in 0..3 {
            let (lo, hi) = cell.span(axis);
            let (min, max) = self.quantizer.world_span(axis, lo, hi);
            let o = slabs.origin[axis];
            if slabs.moves[axis] {
                // No NaN: the inverse is finite and not 0, the bounds are
                // finite or infinite, never both with 0.
                let (a, b) = ((min - o) * slabs.inverse[axis], (max - o) * slabs.inverse[axis]);
                let (near, far) = if a <= b { (a, b) } else { (b, a) };
                first = first.max(near);
                last = last.min(far);
            } else if o < min || o > max {
                return None;
            }
        }
        (first <= last).then_some(first)
    }
}
