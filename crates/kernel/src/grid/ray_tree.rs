//! The first-hit rays' own tree: an eight-wide tree of box hulls over the
//! kept boxes, built on the first cast after a build and kept until the
//! next one.
//!
//! The grid's leaves are cells, not the hulls of what they hold: a long ray
//! crosses many leaves holding nothing it meets. This tree's nodes are the
//! hulls of their boxes, eight children each, their bounds stored axis by
//! axis so one pass over eight lanes tests all children (compiled for AVX2
//! where the grid's kernel is, the same code either way). Its leaves' lanes
//! are the boxes themselves.
//!
//! It is built bottom up from the order the grid's leaves already hold the
//! boxes in (a depth-first walk of 4×4×4 blocks, near enough a Morton
//! order): each box at its first slot, eight neighbours to a leaf node, eight
//! neighbouring nodes to a parent. No sort, and nothing of it is read by
//! pairs or box queries: a build pays nothing for it.
//!
//! The node test is a filter in `f64` with the exact test's widened error
//! (see `SLACK` in `ray.rs`): it never skips a box [`Ray::entry`] hits.

use broadphase_storage::{Aabb, Ray, SENTINEL_ID};
use core::mem::MaybeUninit;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Children per node.
const WIDTH: usize = 8;

/// Nodes that can wait at once: at most `WIDTH - 1` siblings per level
/// above the node being tested, and a tree of `u32::MAX` boxes has 11
/// levels.
const STACK: usize = 128;

/// The relative error the node test allows for in every `t` it computes:
/// as in the grid's walk, far above the three roundings of `f64` in a
/// slab `t` here (2^-53 each) and the two in [`Ray::entry`]'s.
const SLACK: f64 = 1.0 / (1u64 << 46) as f64;

/// Eight children's boxes, axis by axis, and what they are. A lane past
/// `count` has an empty box (`lo` +inf, `hi` -inf), which every ray misses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct WideNode {
    lo: [[f32; WIDTH]; 3],
    hi: [[f32; WIDTH]; 3],
    /// Box ids in a leaf node, node indices otherwise.
    child: [u32; WIDTH],
    count: u32,
    leaf: bool,
}

impl WideNode {
    const EMPTY: WideNode = WideNode {
        lo: [[f32::INFINITY; WIDTH]; 3],
        hi: [[f32::NEG_INFINITY; WIDTH]; 3],
        child: [SENTINEL_ID; WIDTH],
        count: 0,
        leaf: false,
    };

    /// The hull of the node's children.
    fn hull(&self) -> Aabb {
        let lo = self.lo.map(|axis| axis.iter().copied().fold(f32::INFINITY, f32::min));
        let hi = self.hi.map(|axis| axis.iter().copied().fold(f32::NEG_INFINITY, f32::max));
        Aabb { min: lo.into(), max: hi.into() }
    }

    /// The box of one lane: a box's own bounds in a leaf.
    #[inline(always)]
    fn lane_box(&self, lane: usize) -> Aabb {
        Aabb {
            min: [0, 1, 2].map(|a| self.lo[a][lane]).into(),
            max: [0, 1, 2].map(|a| self.hi[a][lane]).into(),
        }
    }

    fn set(&mut self, lane: usize, child: u32, bounds: &Aabb) {
        for axis in 0..3 {
            self.lo[axis][lane] = bounds.min[axis];
            self.hi[axis][lane] = bounds.max[axis];
        }
        self.child[lane] = child;
    }
}

/// A box as the build sorts it: its center, and its index.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Centered {
    center: [f32; 3],
    id: u32,
}

/// The tree: every node after its children, the root last.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RayTree {
    nodes: Vec<WideNode>,
    /// The boxes being split (build scratch).
    items: Vec<Centered>,
}

impl RayTree {
    /// Builds the tree over `boxes`.
    pub(crate) fn build(&mut self, boxes: &[Aabb]) {
        self.nodes.clear();
        self.items.clear();
        self.items.extend(boxes.iter().enumerate().map(|(id, b)| Centered {
            // Halves first: the sum of two `f32::MAX` would overflow.
            center: (b.min * 0.5 + b.max * 0.5).to_array(),
            id: id as u32,
        }));
        if boxes.is_empty() {
            return;
        }
        let mut items = core::mem::take(&mut self.items);
        self.node(&mut items, boxes);
        self.items = items;
    }

    /// The node over `items` (reordered), after every node under it;
    /// returns its index. A node of more than `WIDTH` boxes has children
    /// of `size` boxes each (the last may hold fewer), `size` the smallest
    /// power of `WIDTH` that needs no more than `WIDTH` of them: every node
    /// below is full but those at the end of a level.
    fn node(&mut self, items: &mut [Centered], boxes: &[Aabb]) -> u32 {
        let mut node = WideNode { count: items.len().min(WIDTH) as u32, ..WideNode::EMPTY };
        if items.len() <= WIDTH {
            node.leaf = true;
            for (lane, item) in items.iter().enumerate() {
                node.set(lane, item.id, &boxes[item.id as usize]);
            }
        } else {
            let mut size = WIDTH;
            while size * WIDTH < items.len() {
                size *= WIDTH;
            }
            split(items, size);
            node.count = items.len().div_ceil(size) as u32;
            for (lane, part) in items.chunks_mut(size).enumerate() {
                let child = self.node(part, boxes);
                let hull = self.nodes[child as usize].hull();
                node.set(lane, child, &hull);
            }
        }
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// Nodes the buffers hold without allocating.
    pub(crate) fn capacity(&self) -> usize {
        self.nodes.capacity()
    }

    /// Grows the buffers to hold a tree of `nodes` nodes over
    /// `WIDTH * nodes` boxes without allocating.
    pub(crate) fn reserve_exact(&mut self, nodes: usize) {
        self.nodes.reserve_exact(nodes.saturating_sub(self.nodes.len()));
        let boxes = nodes * WIDTH;
        self.items.reserve_exact(boxes.saturating_sub(self.items.len()));
    }

    /// Copies `source`'s tree into these buffers.
    fn copy_from(&mut self, source: &RayTree) {
        self.nodes.clear();
        self.nodes.extend_from_slice(&source.nodes);
    }

    /// Whether this is a tree over exactly `boxes`: every box once, in a
    /// leaf lane holding its own bounds, every other lane's box the hull of
    /// its child, every node below the root reached once.
    pub(crate) fn covers(&self, boxes: &[Aabb]) -> Result<(), String> {
        let Some(root) = self.nodes.len().checked_sub(1) else {
            return if boxes.is_empty() { Ok(()) } else { Err("no tree over boxes".into()) };
        };
        let mut box_seen = vec![false; boxes.len()];
        let mut node_seen = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        while let Some(index) = stack.pop() {
            if core::mem::replace(&mut node_seen[index], true) {
                return Err(format!("node {index} reached twice"));
            }
            let node = &self.nodes[index];
            let count = node.count as usize;
            if count == 0 || count > WIDTH {
                return Err(format!("node {index} has {count} children"));
            }
            for lane in 0..WIDTH {
                let lane_box = node.lane_box(lane);
                let child = node.child[lane];
                let want = if lane >= count {
                    (child == SENTINEL_ID).then_some(WideNode::EMPTY.hull())
                } else if node.leaf {
                    match box_seen.get_mut(child as usize) {
                        Some(seen) if !*seen => {
                            *seen = true;
                            Some(boxes[child as usize])
                        }
                        _ => None,
                    }
                } else {
                    stack.push(child as usize);
                    self.nodes
                        .get(child as usize)
                        .filter(|_| (child as usize) < index)
                        .map(WideNode::hull)
                };
                if want != Some(lane_box) {
                    return Err(format!(
                        "node {index}, lane {lane}: child {child} is not {lane_box:?}"
                    ));
                }
            }
        }
        if let Some(lost) = box_seen.iter().position(|&s| !s) {
            return Err(format!("box {lost} is in no leaf of the rays' tree"));
        }
        if let Some(lost) = node_seen.iter().position(|&s| !s) {
            return Err(format!("node {lost} of the rays' tree is unreachable"));
        }
        Ok(())
    }
}

/// Orders `items` so that each run of `size` holds neighbours: split in
/// two at a multiple of `size` near the middle, across the axis where the
/// centers spread most, each half again, until every part is one run.
fn split(items: &mut [Centered], size: usize) {
    let runs = items.len().div_ceil(size);
    if runs <= 1 {
        return;
    }
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for item in items.iter() {
        for axis in 0..3 {
            lo[axis] = lo[axis].min(item.center[axis]);
            hi[axis] = hi[axis].max(item.center[axis]);
        }
    }
    // In `f64`: the spread of centers at both ends of `f32` overflows it.
    let spread = |a: usize| f64::from(hi[a]) - f64::from(lo[a]);
    let axis = (0..3).fold(0, |best, a| if spread(a) > spread(best) { a } else { best });
    let middle = runs.div_ceil(2) * size;
    items.select_nth_unstable_by(middle, |a, b| a.center[axis].total_cmp(&b.center[axis]));
    let (left, right) = items.split_at_mut(middle);
    split(left, size);
    split(right, size);
}

/// The ray as the node test reads it, per axis: which bound the ray meets
/// first, where `t` is measured from for each bound, and `1 / dir`.
struct Lanes {
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
    fn of(ray: &Ray) -> Self {
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
    fn test(&self, node: &WideNode, limit: f64) -> ([f64; WIDTH], u32) {
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
    unsafe fn test_avx2(&self, node: &WideNode, limit: f64) -> ([f64; WIDTH], u32) {
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

/// Asks for a node's cache lines ahead of its test: the children a ray
/// meets are known together, and all but the nearest wait on the stack.
#[inline(always)]
fn prefetch(node: &WideNode) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let at = (node as *const WideNode).cast::<i8>();
        for line in 0..size_of::<WideNode>() / 64 {
            // SAFETY: a prefetch reads nothing and faults on nothing; the
            // address lies inside `node`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at.add(64 * line)) };
        }
    }
}

/// A node waiting to be tested, with where the ray enters its box.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    node: u32,
    entry: f64,
}

impl RayTree {
    /// The smallest `(entry(id, box), id)` over the boxes the ray may
    /// hit: `entry` is the exact test, called only for boxes whose lane the
    /// ray meets before the best hit so far, with the box's bounds as the
    /// tree holds them (the kept box's own; it may return `None` to skip a
    /// box). `entry` must lie at or past where the ray enters box `id`.
    #[inline]
    pub(crate) fn first_hit(
        &self,
        ray: &Ray,
        entry: impl FnMut(u32, &Aabb) -> Option<f32>,
    ) -> Option<(f32, u32)> {
        self.first_hit_with(ray, entry, Lanes::test)
    }

    /// The walk itself, with `test` as the node test.
    #[inline(always)]
    fn first_hit_with(
        &self,
        ray: &Ray,
        mut entry: impl FnMut(u32, &Aabb) -> Option<f32>,
        test: impl Fn(&Lanes, &WideNode, f64) -> ([f64; WIDTH], u32),
    ) -> Option<(f32, u32)> {
        let root = self.nodes.len().checked_sub(1)?;
        let lanes = Lanes::of(ray);
        let mut best: Option<(f32, u32)> = None;
        // Every exact entry that rounds to the best `t` lies below the next
        // `f32`: nodes entered at or past it cannot win.
        let mut limit = f64::INFINITY;
        // Left uninitialised: zeroing it would cost more than a short ray.
        let mut stack = [const { MaybeUninit::<Waiting>::uninit() }; STACK];
        stack[0].write(Waiting { node: root as u32, entry: 0.0 });
        let mut waiting = 1;
        while waiting > 0 {
            waiting -= 1;
            // SAFETY: slots below `waiting` were all written: slot 0 above,
            // every other by the push that raised `waiting` past it.
            let popped = unsafe { stack[waiting].assume_init() };
            if popped.entry >= limit {
                continue;
            }
            let node = &self.nodes[popped.node as usize];
            let (first, mut met) = test(&lanes, node, limit);
            if node.leaf {
                while met != 0 {
                    let lane = met.trailing_zeros() as usize;
                    met &= met - 1;
                    let id = node.child[lane];
                    if let Some(t) = entry(id, &node.lane_box(lane))
                        && best.is_none_or(|b| (t, id) < b)
                    {
                        best = Some((t, id));
                        limit = f64::from(t.next_up());
                    }
                }
                continue;
            }
            // Nearest child popped first: pushed farthest first.
            let base = waiting;
            while met != 0 {
                let lane = met.trailing_zeros() as usize;
                met &= met - 1;
                let child = Waiting { node: node.child[lane], entry: first[lane] };
                prefetch(&self.nodes[child.node as usize]);
                let mut at = waiting;
                // SAFETY: slots `base..waiting` were written by this loop.
                while at > base && unsafe { stack[at - 1].assume_init() }.entry < child.entry {
                    // SAFETY: as above.
                    stack[at].write(unsafe { stack[at - 1].assume_init() });
                    at -= 1;
                }
                stack[at].write(child);
                waiting += 1;
            }
        }
        best
    }

    /// [`first_hit`](Self::first_hit) compiled for AVX2, with the node
    /// test's eight lanes in two registers per bound (the same operations
    /// in the same order as [`Lanes::test`], so the same lanes pass).
    #[cfg(simd)]
    #[target_feature(enable = "avx2")]
    pub(crate) fn first_hit_avx2(
        &self,
        _: super::cpu::Avx2Token,
        ray: &Ray,
        entry: impl FnMut(u32, &Aabb) -> Option<f32>,
    ) -> Option<(f32, u32)> {
        // SAFETY: compiled for AVX2 here, which the token proves.
        self.first_hit_with(ray, entry, |lanes, node, limit| unsafe {
            lanes.test_avx2(node, limit)
        })
    }
}

/// The rays' tree of a kept build, built once through `&self` (casts take
/// `&self`, from any thread; the first builds, the others wait for it) and
/// dropped by `&mut self` when a build replaces the boxes. Its buffers
/// move between the two fields, never freed, so a warm frame of build then
/// casts allocates nothing.
#[derive(Default)]
pub(crate) struct RayTreeCell {
    tree: OnceLock<RayTree>,
    /// The buffers while no tree is built.
    spare: Mutex<RayTree>,
}

impl core::fmt::Debug for RayTreeCell {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RayTreeCell")
            .field("nodes", &self.tree.get().map(|t| t.nodes.len()))
            .finish()
    }
}

impl RayTreeCell {
    /// The tree, built now over `boxes` if this build has none
    /// yet.
    #[inline]
    pub(crate) fn get(&self, boxes: &[Aabb]) -> &RayTree {
        self.tree.get_or_init(|| {
            let spare = &mut *self.spare.lock().unwrap_or_else(PoisonError::into_inner);
            let mut tree = core::mem::take(spare);
            tree.build(boxes);
            tree
        })
    }

    /// The tree, if a cast has built it.
    pub(crate) fn built(&self) -> Option<&RayTree> {
        self.tree.get()
    }

    /// Drops the tree (the boxes it was built over are about to change),
    /// keeping its buffers.
    pub(crate) fn forget(&mut self) {
        if let Some(tree) = self.tree.take() {
            *self.spare.get_mut().unwrap_or_else(PoisonError::into_inner) = tree;
        }
    }

    /// The buffers, wherever they are.
    fn buffers(&mut self) -> &mut RayTree {
        match self.tree.get_mut() {
            Some(tree) => tree,
            None => self.spare.get_mut().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// Makes this `source`'s tree: copied if it has one, else left to a
    /// first cast. Copies into the buffers already here.
    pub(crate) fn clone_from(&mut self, source: &RayTreeCell) {
        self.forget();
        if let Some(tree) = source.tree.get() {
            let mut buffers = core::mem::take(self.buffers());
            buffers.copy_from(tree);
            // Emptied by `forget`: the cell is free.
            let _ = self.tree.set(buffers);
        }
    }

    /// Nodes the buffers hold without allocating.
    pub(crate) fn capacity(&self) -> usize {
        // Locked first: the first cast's build takes the buffers from
        // `spare` under this lock, so they are in one place or the other.
        let spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        self.tree.get().map_or(spare.capacity(), RayTree::capacity)
    }

    /// Grows the buffers to hold a tree of `nodes` nodes without
    /// allocating.
    pub(crate) fn reserve_exact(&mut self, nodes: usize) {
        self.buffers().reserve_exact(nodes);
    }
}
