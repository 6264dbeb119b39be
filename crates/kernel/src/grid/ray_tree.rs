//! The first-hit rays' own tree: an eight-wide tree of box hulls over the
//! kept boxes, built once a build's casts have paid for it (or by
//! `prepare_rays`) and kept until the next build.
//!
//! The grid's leaves are cells, not the hulls of what they hold: a long ray
//! crosses many leaves holding nothing it meets. This tree's nodes hold the
//! hulls of their eight children, axis by axis, so one pass over eight
//! lanes tests them all ([`ray_lanes`](super::ray_lanes)); a leaf's lanes
//! are the boxes themselves. The walk takes the nearest child first, asks
//! for the others' cache lines while it descends, and skips a node that
//! starts past the best hit so far.
//!
//! The build splits the boxes at the median of their centers across the
//! axis where they spread most, into runs of full subtrees: every node is
//! full but those at the end of a level. Nothing of it is read by pairs or
//! box queries, and nothing is built until a first-hit ray asks: a build
//! pays nothing for it.

use super::ray_lanes::{Lanes, Lanes32, TAME};
use broadphase_storage::{Aabb, Ray, SENTINEL_ID};
use core::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Children per node.
pub(super) const WIDTH: usize = 8;

/// Nodes that can wait at once: at most `WIDTH - 1` siblings per level
/// above the node being tested, and a tree of `u32::MAX` boxes has 11
/// levels.
const STACK: usize = 128;

/// Eight children's boxes, axis by axis, and what they are. A lane past
/// `count` has an empty box (`lo` +inf, `hi` -inf), which every ray misses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct WideNode {
    pub(super) lo: [[f32; WIDTH]; 3],
    pub(super) hi: [[f32; WIDTH]; 3],
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

    /// A leaf over `boxes` (at most [`WIDTH`]), lane `i` holding box
    /// `ids[i]`.
    pub(super) fn leaf(boxes: impl ExactSizeIterator<Item = (u32, Aabb)>) -> WideNode {
        let mut node = WideNode { count: boxes.len() as u32, leaf: true, ..WideNode::EMPTY };
        for (lane, (id, bounds)) in boxes.enumerate() {
            node.set(lane, id, &bounds);
        }
        node
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
    /// Whether every box lies within [`TAME`] of the origin (the `f32`
    /// node test's domain).
    tame: bool,
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
        let root = self.node(&mut items, boxes);
        self.items = items;
        let hull = self.nodes[root as usize].hull();
        self.tame = hull.min.abs().max(hull.max.abs()).max_element() <= TAME;
    }

    /// The node over `items` (reordered), after every node under it;
    /// returns its index. A node of more than `WIDTH` boxes has children
    /// of `size` boxes each (the last may hold fewer), `size` the smallest
    /// power of `WIDTH` that needs no more than `WIDTH` of them: every node
    /// below is full but those at the end of a level.
    fn node(&mut self, items: &mut [Centered], boxes: &[Aabb]) -> u32 {
        let node = if items.len() <= WIDTH {
            WideNode::leaf(items.iter().map(|item| (item.id, boxes[item.id as usize])))
        } else {
            let mut node = WideNode::EMPTY;
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
            node
        };
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
        self.tame = source.tame;
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
    // The spread of a thousand of them, evenly strided, picks the axis as
    // well as all of them would, for a pass over a thousand.
    for item in items.iter().step_by(items.len() / 1024 + 1) {
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

/// Asks for a node's cache lines ahead of its test: the children a ray
/// meets are known together, and all but the nearest wait on the stack.
#[inline(always)]
fn prefetch(node: &WideNode) {
    let at = (node as *const WideNode).cast::<u8>();
    for line in 0..size_of::<WideNode>() / 64 {
        broadphase_storage::prefetch(at.wrapping_add(64 * line));
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
        match self.lanes32(ray) {
            Some(lanes) => self.first_hit_with(&lanes, entry, Lanes32::test),
            None => self.first_hit_with(&Lanes::of(ray), entry, Lanes::test),
        }
    }

    /// The ray for the `f32` node test, if it and this tree are within
    /// [`TAME`].
    #[inline(always)]
    fn lanes32(&self, ray: &Ray) -> Option<Lanes32> {
        if self.tame { Lanes32::of(ray) } else { None }
    }

    /// The walk itself, with `test` as the node test.
    #[inline(always)]
    fn first_hit_with<L, E: Copy + Into<f64>>(
        &self,
        lanes: &L,
        mut entry: impl FnMut(u32, &Aabb) -> Option<f32>,
        test: impl Fn(&L, &WideNode, f64) -> ([E; WIDTH], u32),
    ) -> Option<(f32, u32)> {
        let root = self.nodes.len().checked_sub(1)?;
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
            let (first, mut met) = test(lanes, node, limit);
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
                let child = Waiting { node: node.child[lane], entry: first[lane].into() };
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
    /// tests' SIMD twins (the same operations in the same order, so the
    /// same lanes pass).
    #[cfg(simd)]
    #[target_feature(enable = "avx2")]
    pub(crate) fn first_hit_avx2(
        &self,
        _: super::cpu::Avx2Token,
        ray: &Ray,
        entry: impl FnMut(u32, &Aabb) -> Option<f32>,
    ) -> Option<(f32, u32)> {
        match self.lanes32(ray) {
            Some(lanes) => self.first_hit_with(&lanes, entry, |lanes, node, limit| {
                // SAFETY: compiled for AVX2 here, which the token proves.
                unsafe { lanes.test_avx2(node, limit) }
            }),
            None => self.first_hit_with(&Lanes::of(ray), entry, |lanes, node, limit| {
                // SAFETY: as above.
                unsafe { lanes.test_avx2(node, limit) }
            }),
        }
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
    /// Boxes the first-hit cell walks since the build have tested (see
    /// [`note_walk`](Self::note_walk)).
    walked: AtomicU64,
}

/// Boxes a first-hit cell walk tests, summed over the casts since a build,
/// that cost about as much as building the rays' tree over one box: the
/// build is a few hundred nanoseconds a box, a walk's quantized test
/// about one per box in the leaves it enters (uniform1m: some 10,000 a
/// long ray, in about 10 µs).
const WALKED_PER_BOX: u64 = 256;

impl core::fmt::Debug for RayTreeCell {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RayTreeCell")
            .field("nodes", &self.tree.get().map(|t| t.nodes.len()))
            .finish()
    }
}

impl RayTreeCell {
    /// Notes a first-hit cell walk that tested `boxes` boxes.
    ///
    /// The tree is worth building once the walks since the build have
    /// cost what building it costs (the rent-or-buy rule: the casts then
    /// pay at most about twice what the better of the two would have
    /// cost): a grid rebuilt every frame and cast through a few times a
    /// frame never builds it; one cast through many times builds it after
    /// a fraction of them.
    #[inline]
    pub(crate) fn note_walk(&self, boxes: usize) {
        self.walked.fetch_add(boxes as u64, Ordering::Relaxed);
    }

    /// Whether the walks since the build have paid for a tree over
    /// `boxes` boxes.
    #[inline]
    pub(crate) fn paid_for(&self, boxes: usize) -> bool {
        self.walked.load(Ordering::Relaxed) >= boxes as u64 * WALKED_PER_BOX
    }

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
        *self.walked.get_mut() = 0;
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
    /// later cast. Copies into the buffers already here.
    pub(crate) fn clone_from(&mut self, source: &RayTreeCell) {
        self.forget();
        *self.walked.get_mut() = source.walked.load(Ordering::Relaxed);
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
