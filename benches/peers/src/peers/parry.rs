//! parry3d 0.31 `Bvh` (rapier's broad phase): binned build, then either the
//! self traversal (`traverse_bvtt_single_tree`) or one `intersect_aabb`
//! query per box.

use broadphase::Aabb;
use parry3d::bounding_volume::Aabb as PAabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

/// parry's box for ours.
pub fn to_parry(b: &Aabb) -> PAabb {
    PAabb::new(Vector::new(b.min.x, b.min.y, b.min.z), Vector::new(b.max.x, b.max.y, b.max.z))
}

/// Builds the tree.
pub fn build(boxes: &[Aabb], leaves: &mut Vec<PAabb>) -> Bvh {
    leaves.clear();
    leaves.extend(boxes.iter().map(to_parry));
    Bvh::from_leaves(BvhBuildStrategy::Binned, leaves)
}

/// Build + self traversal.
pub fn self_pairs(
    boxes: &[Aabb],
    leaves: &mut Vec<PAabb>,
    ws: &mut BvhWorkspace,
    out: &mut Vec<[u32; 2]>,
) {
    let bvh = build(boxes, leaves);
    out.clear();
    bvh.traverse_bvtt_single_tree::<false>(ws, &mut |a, b| super::keep(boxes, a, b, out));
}

/// Build + one query per box (partners with a higher index kept).
pub fn query_pairs(boxes: &[Aabb], leaves: &mut Vec<PAabb>, out: &mut Vec<[u32; 2]>) {
    let bvh = build(boxes, leaves);
    out.clear();
    for (i, leaf) in leaves.iter().enumerate() {
        let i = i as u32;
        for j in bvh.intersect_aabb(leaf) {
            if j > i {
                super::keep(boxes, i, j, out);
            }
        }
    }
}

/// One query on a built tree.
pub fn query(bvh: &Bvh, boxes: &[Aabb], q: &Aabb, out: &mut Vec<u32>) {
    out.clear();
    let pq = to_parry(q);
    out.extend(bvh.intersect_aabb(&pq).filter(|&i| boxes[i as usize].overlaps(q)));
}

/// parry's `Bvh` driven across frames as rapier drives it: every box
/// handed to `insert_or_update_partially` with a change-detection margin
/// (the tree enlarges a leaf by it only when the box leaves the leaf),
/// then `refit`, then the self traversal with change detection (then
/// `optimize_incremental` for the next frames), which
/// reports the pairs with at least one changed leaf. Like any broad phase
/// built this way it keeps the candidate pairs (enlarged leaves overlap)
/// between frames, drops those whose leaves separated, and reports the
/// candidates whose true boxes overlap.
pub struct Incremental {
    bvh: Bvh,
    ws: BvhWorkspace,
    /// Each leaf's enlarged box, mirrored (the tree keeps it internally).
    fat: Vec<Aabb>,
    /// The margin per unit of a box's largest extent.
    relative: f32,
    candidates: Vec<[u32; 2]>,
    fresh: Vec<[u32; 2]>,
    merged: Vec<[u32; 2]>,
}

impl Incremental {
    /// The tree over `boxes` (the first `moving` of them move) with
    /// margins of `relative` times each box's largest extent, and its first
    /// candidates (not both static).
    pub fn new(boxes: &[Aabb], moving: usize, relative: f32) -> Self {
        let fat: Vec<Aabb> = boxes.iter().map(|b| enlarge(b, relative)).collect();
        let mut bvh = Bvh::new();
        for (i, f) in fat.iter().enumerate() {
            bvh.insert_or_update_partially(to_parry(f), i as u32, 0.0);
        }
        let mut ws = BvhWorkspace::default();
        bvh.refit(&mut ws);
        let mut candidates = Vec::new();
        let moving = moving as u32;
        bvh.traverse_bvtt_single_tree::<false>(&mut ws, &mut |a, b| {
            if a.min(b) < moving && fat[a as usize].overlaps(&fat[b as usize]) {
                candidates.push([a.min(b), a.max(b)]);
            }
        });
        candidates.sort_unstable();
        candidates.dedup();
        Incremental { bvh, ws, fat, relative, candidates, fresh: Vec::new(), merged: Vec::new() }
    }

    /// One frame: the boxes as they are now (only the first `moving`
    /// changed, as rapier only hands over moved colliders), their
    /// overlapping pairs out.
    pub fn frame(&mut self, boxes: &[Aabb], moving: usize, out: &mut Vec<[u32; 2]>) {
        for (i, b) in boxes[..moving].iter().enumerate() {
            let margin = self.relative * (b.max - b.min).max_element();
            self.bvh.insert_or_update_partially(to_parry(b), i as u32, margin);
            let f = &mut self.fat[i];
            if !(f.min.cmple(b.min).all() && b.max.cmple(f.max).all()) {
                *f = enlarge(b, self.relative);
            }
        }
        self.bvh.refit(&mut self.ws);
        self.fresh.clear();
        let fresh = &mut self.fresh;
        self.bvh.traverse_bvtt_single_tree::<true>(&mut self.ws, &mut |a, b| {
            fresh.push([a.min(b), a.max(b)]);
        });
        // Tree quality for the next frames, after this frame's pairs.
        self.bvh.optimize_incremental(&mut self.ws);
        self.fresh.sort_unstable();
        self.fresh.dedup();
        // Kept and new candidates whose enlarged boxes still overlap.
        let fat = &self.fat;
        let overlap = |&[a, b]: &[u32; 2]| fat[a as usize].overlaps(&fat[b as usize]);
        self.merged.clear();
        let (mut i, mut j) = (0, 0);
        while i < self.candidates.len() || j < self.fresh.len() {
            let next = match (self.candidates.get(i), self.fresh.get(j)) {
                (Some(c), Some(f)) if c == f => {
                    i += 1;
                    j += 1;
                    *c
                }
                (Some(c), f) if f.is_none_or(|f| c < f) => {
                    i += 1;
                    *c
                }
                (_, Some(f)) => {
                    j += 1;
                    *f
                }
                (Some(c), None) => {
                    i += 1;
                    *c
                }
                (None, None) => break,
            };
            if overlap(&next) {
                self.merged.push(next);
            }
        }
        std::mem::swap(&mut self.candidates, &mut self.merged);
        out.clear();
        out.extend(
            self.candidates
                .iter()
                .filter(|&&[a, b]| boxes[a as usize].overlaps(&boxes[b as usize])),
        );
    }
}

/// `b` enlarged on every side by `relative` times its largest extent.
fn enlarge(b: &Aabb, relative: f32) -> Aabb {
    let m = broadphase::glam::Vec3::splat(relative * (b.max - b.min).max_element());
    Aabb::new(b.min - m, b.max + m)
}

/// The first box `ray` hits, with parry's best-first `Bvh::cast_ray`; the
/// leaf test is ours ([`Ray::entry`]), so the answers can be gated equal
/// and the time is parry's traversal.
pub fn cast_ray(bvh: &Bvh, boxes: &[Aabb], ray: &broadphase::query::Ray) -> Option<(u32, f32)> {
    let o = ray.origin;
    let d = ray.dir;
    let pray = parry3d::query::Ray::new(Vector::new(o.x, o.y, o.z), Vector::new(d.x, d.y, d.z));
    bvh.cast_ray(&pray, ray.max_t, |leaf, best| {
        ray.entry(&boxes[leaf as usize]).filter(|&t| t <= best)
    })
}
