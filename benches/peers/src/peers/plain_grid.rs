//! The plain fixed-radius grid anyone writes in an afternoon, as a yardstick
//! for the neighbor structures: cells one reach wide over the points'
//! bounds, a counting sort of the points into them, then for every point
//! its 27 surrounding cells scanned as 9 contiguous x-runs, counting the
//! partners within reach (inclusive, the same `f32` test as broadphase's,
//! left to right). It only counts: no lists are written.

use broadphase::glam::Vec3;

/// Kept across frames, as a simulation would.
#[derive(Default)]
pub struct PlainGrid {
    starts: Vec<u32>,
    cell_of: Vec<u32>,
    xs: Vec<f32>,
    ys: Vec<f32>,
    zs: Vec<f32>,
    rs: Vec<f32>,
    order: Vec<u32>,
    fill: Vec<u32>,
}

impl PlainGrid {
    /// Neighbor counts of `points` within `radius` (points), or contact
    /// counts (`radii` given: `d <= r_i + r_j`), in caller order, into
    /// `counts`.
    pub fn count(
        &mut self,
        points: &[Vec3],
        radius: f32,
        radii: Option<&[f32]>,
        counts: &mut Vec<u32>,
    ) {
        let n = points.len();
        counts.clear();
        counts.resize(n, 0);
        if n == 0 {
            return;
        }
        let reach = match radii {
            Some(radii) => 2.0 * radii.iter().fold(0.0f32, |m, &r| m.max(r)),
            None => radius,
        };
        let lo = points.iter().fold(Vec3::splat(f32::MAX), |m, p| m.min(*p));
        let hi = points.iter().fold(Vec3::splat(f32::MIN), |m, p| m.max(*p));
        // A little wider than the reach, so rounding never puts a pair two
        // cells apart.
        let cell = (reach * 1.001).max(1e-6);
        let dims = ((hi - lo) / cell).as_uvec3() + 1;
        let (dx, dy, dz) = (dims.x as usize, dims.y as usize, dims.z as usize);
        let coord = |p: Vec3| ((p - lo) / cell).as_uvec3().min(dims - 1);
        self.starts.clear();
        self.starts.resize(dx * dy * dz + 1, 0);
        self.cell_of.clear();
        for p in points {
            let c = coord(*p);
            let id = c.x as usize + dx * (c.y as usize + dy * c.z as usize);
            self.cell_of.push(id as u32);
            self.starts[id + 1] += 1;
        }
        for i in 0..dx * dy * dz {
            self.starts[i + 1] += self.starts[i];
        }
        for column in [&mut self.xs, &mut self.ys, &mut self.zs, &mut self.rs] {
            column.clear();
            column.resize(n, 0.0);
        }
        self.order.clear();
        self.order.resize(n, 0);
        self.fill.clear();
        self.fill.extend_from_slice(&self.starts);
        for (i, (&id, p)) in self.cell_of.iter().zip(points).enumerate() {
            let slot = self.fill[id as usize] as usize;
            self.fill[id as usize] += 1;
            (self.xs[slot], self.ys[slot], self.zs[slot]) = (p.x, p.y, p.z);
            self.rs[slot] = radii.map_or(0.0, |r| r[i]);
            self.order[slot] = i as u32;
        }
        let r2 = radius * radius;
        for z in 0..dz {
            for y in 0..dy {
                for x in 0..dx {
                    let id = x + dx * (y + dy * z);
                    for slot in self.starts[id] as usize..self.starts[id + 1] as usize {
                        let (px, py, pz, pr) =
                            (self.xs[slot], self.ys[slot], self.zs[slot], self.rs[slot]);
                        let mut found = 0;
                        for nz in z.saturating_sub(1)..(z + 2).min(dz) {
                            for ny in y.saturating_sub(1)..(y + 2).min(dy) {
                                let row = dx * (ny + dy * nz);
                                let from = self.starts[row + x.saturating_sub(1)] as usize;
                                let to = self.starts[row + (x + 2).min(dx)] as usize;
                                for other in from..to {
                                    let (ex, ey, ez) = (
                                        px - self.xs[other],
                                        py - self.ys[other],
                                        pz - self.zs[other],
                                    );
                                    let d2 = ex * ex + ey * ey + ez * ez;
                                    let limit = if radii.is_some() {
                                        let t = pr + self.rs[other];
                                        t * t
                                    } else {
                                        r2
                                    };
                                    found += u32::from(d2 <= limit && other != slot);
                                }
                            }
                        }
                        counts[self.order[slot] as usize] = found;
                    }
                }
            }
        }
    }
}
