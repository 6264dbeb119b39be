//! The index of enlarged boxes: kept grids built from the live proxies'
//! enlarged boxes, plus the list of proxies whose entry in them went stale
//! since (re-indexed, inserted after the build).
//!
//! The index has two tiers: the grids of the proxies at rest (static or
//! asleep) and those of the others. Each is rebuilt on its own, so a
//! world of many static or sleeping proxies and a few moving ones
//! rebuilds the moving ones' tier, not the resting ones'. A proxy that
//! comes to rest or wakes is re-indexed into the other tier. A
//! re-indexed proxy queries both.
//!
//! A big tier is one grid per thread, built at once: a rebuild of a
//! million proxies is one long frame for the game, and this shortens it
//! by the thread count. The grids split the tier's members into slabs
//! along the axis where they spread most, about as many in each, so a
//! re-indexed proxy's query walks the one or two grids whose bounds it
//! meets rather than all of them (split by slot ranges, each grid would
//! cover the whole world).
//! Members that cannot be cut evenly are split by slot ranges. The pairs
//! are the same whatever the split.
//!
//! Rebuilding a tier costs about what one pass of the grid tree over its
//! proxies costs; finding the pairs among the stale ones costs that per
//! stale proxy, every update. So a tier is rebuilt when its stale proxies'
//! cost summed over the updates since its last build reaches that of a
//! rebuild (the ski-rental rule: at most twice the cost of the best
//! schedule in hindsight).

#[cfg(feature = "serde")]
use super::slots::contains;
use super::slots::{SlotState, Slots};
use broadphase_jobs::JobSystem;
use broadphase_kernel::{AdaptiveGrid, GridConfig};
use broadphase_partition::PartitionError;
use broadphase_storage::{Aabb, AlignedColumn, InputError, Pool};
use core::ops::Range;
use core::sync::atomic::{AtomicU64, Ordering};
use glam::Vec3;

/// The next build's stamp: unique in the process, so that two parts with
/// the same stamp hold the same grid, whichever broad phase built it.
static NEXT_BUILD: AtomicU64 = AtomicU64::new(1);

/// Live proxies per grid at least, when the index is split over threads.
const PART_MIN: usize = 64 * 1024;

/// Most grids the index splits into.
const MAX_PARTS: usize = 16;

/// Most re-indexed proxies queried against the index per job.
pub(crate) const QUERY_CHUNK: usize = 1024;

/// Fewest re-indexed proxies queried per job, when there are more.
pub(crate) const QUERY_CHUNK_MIN: usize = 128;

/// How many re-indexed proxies each query job takes, of `moved` on
/// `threads`: about two jobs a thread, so that 1,100 of them on 2 threads
/// are not one job of 1,024 and one of 76 (the update would wait on the
/// first), but at least [`QUERY_CHUNK_MIN`] so a job's start is
/// amortized, and at most [`QUERY_CHUNK`].
pub(crate) fn query_chunk(moved: usize, threads: usize) -> usize {
    moved.div_ceil(2 * threads.max(1)).clamp(QUERY_CHUNK_MIN, QUERY_CHUNK)
}

/// One grid of the index: a slab of the tier's members, or a range of
/// slots (see [`Slabs`]).
#[derive(Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Part {
    grid: AdaptiveGrid,
    /// Grid index → slot.
    ids: AlignedColumn<u32>,
    /// The grid's boxes, gathered for the build.
    #[cfg_attr(feature = "serde", serde(skip))]
    gathered: Pool<Aabb>,
    failure: Option<InputError>,
    /// The stamp of the build `grid` and `ids` hold (0: none known; so
    /// for a part read from bytes).
    #[cfg_attr(feature = "serde", serde(skip))]
    build: u64,
    /// A box around every box of the build: a query that misses it skips
    /// the grid (whose walk clamps the query to the grid's bounds and
    /// would visit the cells at its edge). Everything when not known (a
    /// part read from bytes).
    #[cfg_attr(feature = "serde", serde(skip, default = "everywhere"))]
    bounds: Aabb,
}

/// A box around every box.
fn everywhere() -> Aabb {
    Aabb::new(glam::Vec3::splat(f32::NEG_INFINITY), glam::Vec3::splat(f32::INFINITY))
}

/// `clone_from` copies the grid and its slots into the part's own
/// buffers; the gathered boxes are the build's scratch and are left as
/// they are.
impl Clone for Part {
    fn clone(&self) -> Self {
        let mut copy = Self::new(*self.grid.config());
        copy.clone_from(self);
        copy
    }

    /// A part that holds the source's build already (a snapshot in a
    /// ring, taken again before the index was rebuilt; a restore of a
    /// snapshot of the build the index still has) copies nothing: the grid
    /// is most of what a snapshot copies.
    fn clone_from(&mut self, source: &Self) {
        self.failure = source.failure;
        if self.build != 0 && self.build == source.build {
            return;
        }
        self.grid.clone_from(&source.grid);
        if self.ids.capacity() < source.ids.capacity() {
            self.ids.clear();
            self.ids.reserve_exact(source.ids.capacity());
        }
        self.ids.clone_from(&source.ids);
        self.build = source.build;
        self.bounds = source.bounds;
    }
}

impl Part {
    fn new(config: GridConfig) -> Self {
        Self {
            grid: AdaptiveGrid::with_config(config),
            ids: AlignedColumn::new(),
            gathered: Pool::new(),
            failure: None,
            build: 0,
            bounds: everywhere(),
        }
    }
}

/// Which proxies a tier holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
enum TierKind {
    /// Live proxies at rest: static or asleep.
    Resting,
    /// The other live proxies.
    Moving,
}

impl TierKind {
    #[inline]
    fn holds(self, slots: &Slots, slot: usize) -> bool {
        match self {
            TierKind::Resting => slots.at_rest.get(slot),
            TierKind::Moving => slots.state[slot].is_live() && !slots.at_rest.get(slot),
        }
    }

    /// A word of marks that holds every slot of this kind in word `word`
    /// (and some others, which [`holds`](Self::holds) tells apart):
    /// gathered word by word, a small tier among many slots (a few moving
    /// proxies in a sleeping world) reads a word per 64 slots.
    #[inline]
    fn candidates(self, slots: &Slots, word: usize) -> u64 {
        match self {
            TierKind::Resting => slots.at_rest.words[word],
            TierKind::Moving => !slots.at_rest.words[word],
        }
    }

    /// Calls `each(slot, indexed box)` for every live proxy of this kind
    /// in `range`, in slot order.
    fn each_member(self, slots: &Slots, range: Range<usize>, each: impl FnMut(usize, &Aabb)) {
        let (marks, holds) = (|word| self.candidates(slots, word), |s| self.holds(slots, s));
        slots.each_marked(range, marks, holds, each);
    }

    /// Live proxies of this kind.
    fn count(self, slots: &Slots) -> usize {
        match self {
            TierKind::Resting => slots.resting,
            TierKind::Moving => slots.live - slots.resting,
        }
    }
}

/// One tier: the grids of one kind's enlarged boxes, and what went stale
/// in them.
#[derive(Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Tier {
    /// The proxies the tier holds.
    kind: TierKind,
    parts: Vec<Part>,
    /// How many of `parts` the last build used.
    used: usize,
    /// Whether the grids reflect a build that later updates patched with
    /// the stale list; false before the first build and after a full
    /// recomputation.
    built: bool,
    /// Build number: a slot whose `dirty` mark equals it is stale here.
    number: u32,
    /// Per slot: the build number at which its entry went stale.
    dirty: Pool<u32>,
    /// Per slot: whether the last build took it (it has an entry).
    member: Pool<u64>,
    /// Slots marked stale since the build, each once.
    stale: Pool<u32>,
    /// Stale proxies of this kind, summed over the updates since the build.
    debt: u64,
    /// Whether the tier was rebuilt by this update's `prepare`.
    rebuilt_now: bool,
    /// Whether this update's `prepare` dropped the grids because most of
    /// the tier was re-indexed: then every member is paired in the stale
    /// pass, and none queries the tier.
    dropped_now: bool,
    /// A rebuild's count of members per slice of the cut axis (see
    /// [`Slabs`]); scratch, not part of the state.
    #[cfg_attr(feature = "serde", serde(skip))]
    histogram: Pool<u32>,
    /// A rebuild's passes over the slots, one per slot range; scratch.
    #[cfg_attr(feature = "serde", serde(skip))]
    scans: Vec<Scan>,
    /// The bounds of the members' centers at the last rebuild cut in
    /// slabs: the next one counts its histogram over them, and measures
    /// the bounds again only if that cannot cut evenly.
    #[cfg_attr(feature = "serde", serde(skip))]
    last_centers: Option<(Vec3, Vec3)>,
}

/// `clone_from` copies the grids of the last build, the stale marks and
/// the debt into the tier's own buffers: the copy is as current, and as
/// close to its next rebuild, as the original.
impl Clone for Tier {
    fn clone(&self) -> Self {
        let mut copy = Self::new(self.kind);
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        // Parts past `used` hold nothing a query reads: a build rebuilds
        // them before it uses them.
        for (k, part) in source.parts[..source.used].iter().enumerate() {
            match self.parts.get_mut(k) {
                Some(mine) => mine.clone_from(part),
                None => self.parts.push(part.clone()),
            }
        }
        self.kind = source.kind;
        self.used = source.used;
        self.built = source.built;
        self.number = source.number;
        copy(&mut self.dirty, &source.dirty);
        copy(&mut self.member, &source.member);
        copy(&mut self.stale, &source.stale);
        self.debt = source.debt;
        self.rebuilt_now = source.rebuilt_now;
        self.dropped_now = source.dropped_now;
    }
}

/// Copies `from` into `to`, growing `to` to `from`'s room first, as the
/// grids' copies do: a copy taken every frame stops allocating when the
/// original stops growing.
fn copy<T: Copy>(to: &mut Pool<T>, from: &Pool<T>) {
    if to.capacity() < from.capacity() {
        to.reset();
        to.reserve_exact(from.capacity());
    }
    to.clone_from(from);
}

impl Tier {
    fn new(kind: TierKind) -> Self {
        Self {
            kind,
            parts: Vec::new(),
            used: 0,
            built: false,
            number: 1,
            dirty: Pool::new(),
            member: Pool::new(),
            stale: Pool::new(),
            debt: 0,
            rebuilt_now: false,
            dropped_now: false,
            histogram: Pool::new(),
            scans: Vec::new(),
            last_centers: None,
        }
    }

    /// The slots of `list` whose proxy is now of this tier's kind (and
    /// live): the tier answers for those.
    fn own<'a>(&'a self, slots: &'a Slots, list: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        list.iter().copied().filter(move |&slot| self.kind.holds(slots, slot as usize))
    }

    fn invalidate(&mut self) {
        self.built = false;
        self.used = 0;
        self.stale.reset();
        self.debt = 0;
    }

    #[inline]
    fn is_member(&self, slot: usize) -> bool {
        self.member.get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 != 0)
    }

    /// Whether the tier's entry for `slot`, if any, is current.
    #[inline]
    fn is_current(&self, slot: usize) -> bool {
        self.dirty[slot] != self.number
    }

    /// Marks `slot` stale here (once per build) if it has an entry here
    /// or is of this tier's kind (then it has no current entry anywhere
    /// and is paired among the stale ones).
    #[inline]
    fn mark_stale(&mut self, slots: &Slots, slot: u32) {
        let s = slot as usize;
        if !self.is_member(s) && !self.kind.holds(slots, s) {
            return;
        }
        if self.dirty.len() <= s {
            self.dirty.resize(slots.len(), 0);
        }
        if self.dirty[s] != self.number {
            self.dirty[s] = self.number;
            self.stale.push(slot);
        }
    }

    /// Builds the tier's grids from every live slot of its kind, on all
    /// threads of `jobs` when big; nothing is stale here after it.
    fn rebuild(
        &mut self,
        config: GridConfig,
        jobs: &JobSystem,
        slots: &Slots,
    ) -> Result<(), PartitionError> {
        self.number = self.number.wrapping_add(1);
        self.dirty.resize(slots.len(), 0);
        if self.number == 0 {
            // Marks from 2^32 builds ago would read as current.
            self.dirty.fill(0);
            self.number = 1;
        }
        self.stale.reset();
        self.debt = 0;
        self.built = false;
        self.dropped_now = false;
        let count = self.kind.count(slots);
        let parts = (count / PART_MIN).clamp(1, jobs.threads().min(MAX_PARTS));
        while self.parts.len() < parts {
            self.parts.push(Part::new(config));
        }
        self.used = parts;
        self.member.reset();
        self.member.resize(slots.len().div_ceil(64), 0);
        let kind = self.kind;
        let marks = |word| kind.candidates(slots, word);
        let holds = |slot| kind.holds(slots, slot);
        for part in &mut self.parts[..parts] {
            part.build = 0;
            part.gathered.reset();
            part.ids.clear();
            part.failure = None;
        }
        let cut = if parts > 1 { self.cut_into_slabs(jobs, slots, parts)? } else { false };
        if !cut {
            let range_len = slots.len().div_ceil(parts);
            for (k, part) in self.parts[..parts].iter_mut().enumerate() {
                let range = k * range_len..((k + 1) * range_len).min(slots.len());
                slots.gather_marked(range, marks, holds, &mut part.gathered, &mut part.ids);
            }
            for part in &self.parts[..parts] {
                for &slot in &part.ids {
                    self.member[slot as usize / 64] |= 1 << (slot % 64);
                }
            }
        }
        jobs.for_each_mut(&mut self.parts[..parts], |_, part| {
            crate::profile::zone!("persistent: build index part");
            part.failure = part.grid.build(&part.gathered).err();
            if part.failure.is_none() {
                part.build = NEXT_BUILD.fetch_add(1, Ordering::Relaxed);
                let mut boxes = part.gathered.iter();
                part.bounds = boxes.next().map_or(everywhere(), |&first| {
                    boxes.fold(first, |all, b| Aabb::new(all.min.min(b.min), all.max.max(b.max)))
                });
            }
        })?;
        if let Some(e) = self.parts[..parts].iter_mut().find_map(|p| p.failure.take()) {
            return Err(e.into());
        }
        self.built = true;
        Ok(())
    }
}

impl Tier {
    /// Gathers the tier's members into `parts` grids cut by slabs of
    /// space (see [`Slabs`]), with their `member` bits, in passes over the
    /// slots, each on all threads by slot range: the members' histogram
    /// along the cut axis (over the last cut's bounds of their centers,
    /// while those still cut evenly; else over bounds measured in a pass
    /// of their own), then each range writes its members straight into
    /// their grid's lists, after the members of the ranges before it (so
    /// each list stays in slot order). Returns false, having gathered
    /// nothing, when the members cannot be cut evenly.
    ///
    /// On one thread, in three passes, this took 25–30 ms of a 60 ms
    /// rebuild of drift1m's million proxies.
    fn cut_into_slabs(
        &mut self,
        jobs: &JobSystem,
        slots: &Slots,
        parts: usize,
    ) -> Result<bool, PartitionError> {
        let kind = self.kind;
        let words = slots.len().div_ceil(64);
        let count = jobs.threads().clamp(1, MAX_PARTS).min(words.div_ceil(SCAN_MIN_WORDS)).max(1);
        let words_per_scan = words.div_ceil(count);
        while self.scans.len() < count {
            self.scans.push(Scan::default());
        }
        let scans = &mut self.scans[..count];
        for (k, scan) in scans.iter_mut().enumerate() {
            let first = (k * words_per_scan).min(words) * 64;
            let end = ((k + 1) * words_per_scan).min(words) * 64;
            scan.range = first.min(slots.len())..end.min(slots.len());
        }
        // The last cut's bounds, while they still cut evenly, save a pass.
        let members = kind.count(slots);
        let mut slabs = None;
        let provisional =
            self.last_centers.and_then(|(low, high)| Slabs::along(low, high, members, parts));
        if let Some(provisional) = provisional {
            slabs = count_members(jobs, slots, kind, scans, &mut self.histogram, provisional)?;
        }
        if slabs.is_none() {
            jobs.for_each_mut(scans, |_, scan| scan.bounds(slots, kind))?;
            let (low, high, members) = centers(scans);
            if let Some(measured) = Slabs::along(low, high, members, parts) {
                slabs = count_members(jobs, slots, kind, scans, &mut self.histogram, measured)?;
            }
        }
        let Some(slabs) = slabs else { return Ok(false) };
        let (low, high, _) = centers(scans);
        self.last_centers = Some((low, high));

        // Where each range's members go: in each grid's lists, after the
        // members of the ranges before it.
        for scan in scans.iter_mut() {
            scan.per_part = [0; MAX_PARTS];
            for (slice, &n) in scan.histogram.iter().enumerate() {
                scan.per_part[slabs.part_of_slice(slice)] += n as usize;
            }
        }
        let grids = &mut self.parts[..parts];
        for (k, part) in grids.iter_mut().enumerate() {
            let total = scans.iter().map(|scan| scan.per_part[k]).sum();
            part.gathered.resize(total, Aabb::default());
            part.ids.resize(total, 0);
        }
        let mut outs: [ScanOut<'_>; MAX_PARTS] = Default::default();
        let mut rest_boxes: [&mut [Aabb]; MAX_PARTS] = Default::default();
        let mut rest_ids: [&mut [u32]; MAX_PARTS] = Default::default();
        for (k, part) in grids.iter_mut().enumerate() {
            rest_boxes[k] = &mut part.gathered[..];
            rest_ids[k] = &mut part.ids[..];
        }
        let mut rest_member = &mut self.member[..];
        for (scan, out) in scans.iter().zip(outs.iter_mut()) {
            for k in 0..parts {
                let n = scan.per_part[k];
                let (boxes, more_boxes) = core::mem::take(&mut rest_boxes[k]).split_at_mut(n);
                let (ids, more_ids) = core::mem::take(&mut rest_ids[k]).split_at_mut(n);
                (out.boxes[k], out.ids[k]) = (boxes, ids);
                (rest_boxes[k], rest_ids[k]) = (more_boxes, more_ids);
            }
            let scan_words = scan.range.len().div_ceil(64).min(rest_member.len());
            let (member, more_member) = core::mem::take(&mut rest_member).split_at_mut(scan_words);
            (out.member, rest_member) = (member, more_member);
            out.range = scan.range.clone();
        }
        let slabs = &slabs;
        jobs.for_each_mut(&mut outs[..count], |_, out| out.write(slots, kind, slabs))?;
        Ok(true)
    }
}

/// The members' centers' bounds and count, over every range's.
fn centers(scans: &[Scan]) -> (Vec3, Vec3, usize) {
    scans.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY), 0),
        |(low, high, members), scan| {
            (low.min(scan.low), high.max(scan.high), members + scan.members)
        },
    )
}

/// Counts the members per slice of `slabs`' axis on every range (each
/// range measures its centers' bounds too), sums them into `histogram`
/// and cuts there: `None` when they cannot be cut evenly.
fn count_members(
    jobs: &JobSystem,
    slots: &Slots,
    kind: TierKind,
    scans: &mut [Scan],
    histogram: &mut Pool<u32>,
    slabs: Slabs,
) -> Result<Option<Slabs>, PartitionError> {
    jobs.for_each_mut(scans, |_, scan| scan.count(slots, kind, &slabs))?;
    histogram.reset();
    histogram.resize(SLICES, 0);
    for scan in scans.iter() {
        for (total, &n) in histogram.iter_mut().zip(scan.histogram.iter()) {
            *total += n;
        }
    }
    let members = scans.iter().map(|scan| scan.members).sum();
    Ok(slabs.cut(histogram, members))
}

/// Slot words a rebuild's pass takes per range at least (65,536 slots).
const SCAN_MIN_WORDS: usize = 1024;

/// One slot range's share of a rebuild's passes; reused across rebuilds.
#[derive(Debug)]
struct Scan {
    /// The range's slots (it starts at a multiple of 64).
    range: Range<usize>,
    /// The range's members' centers' bounds, and how many there are.
    low: Vec3,
    high: Vec3,
    members: usize,
    /// The range's members per slice of the cut axis.
    histogram: Pool<u32>,
    /// The range's members that go to each grid.
    per_part: [usize; MAX_PARTS],
}

impl Default for Scan {
    fn default() -> Self {
        Self {
            range: 0..0,
            low: Vec3::ZERO,
            high: Vec3::ZERO,
            members: 0,
            histogram: Pool::new(),
            per_part: [0; MAX_PARTS],
        }
    }
}

impl Scan {
    /// Measures the range's members' centers' bounds and count.
    fn bounds(&mut self, slots: &Slots, kind: TierKind) {
        (self.low, self.high, self.members) = self.measure(slots, kind, |_| {});
    }

    /// Counts the range's members per slice of `slabs`' axis, measuring
    /// their centers as [`bounds`](Self::bounds) does.
    fn count(&mut self, slots: &Slots, kind: TierKind, slabs: &Slabs) {
        let mut histogram = core::mem::take(&mut self.histogram);
        histogram.reset();
        histogram.resize(SLICES, 0);
        (self.low, self.high, self.members) =
            self.measure(slots, kind, |aabb| histogram[slabs.slice_of(aabb)] += 1);
        self.histogram = histogram;
    }

    /// The bounds and count of the range's members' centers, calling
    /// `also` with each member's box on the way.
    fn measure(
        &self,
        slots: &Slots,
        kind: TierKind,
        mut also: impl FnMut(&Aabb),
    ) -> (Vec3, Vec3, usize) {
        let (mut low, mut high, mut members) =
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY), 0usize);
        kind.each_member(slots, self.range.clone(), |_, aabb| {
            also(aabb);
            let center = center(aabb);
            (low, high, members) = (low.min(center), high.max(center), members + 1);
        });
        (low, high, members)
    }
}

/// Where one range's members go: its share of each grid's lists, and its
/// words of the member bits.
#[derive(Debug, Default)]
struct ScanOut<'a> {
    range: Range<usize>,
    boxes: [&'a mut [Aabb]; MAX_PARTS],
    ids: [&'a mut [u32]; MAX_PARTS],
    member: &'a mut [u64],
}

impl ScanOut<'_> {
    fn write(&mut self, slots: &Slots, kind: TierKind, slabs: &Slabs) {
        let mut at = [0usize; MAX_PARTS];
        let first_word = self.range.start / 64;
        let ScanOut { range, boxes, ids, member } = self;
        kind.each_member(slots, range.clone(), |slot, aabb| {
            let part = slabs.part_of(aabb);
            boxes[part][at[part]] = *aabb;
            ids[part][at[part]] = slot as u32;
            at[part] += 1;
            member[slot / 64 - first_word] |= 1 << (slot % 64);
        });
    }
}

/// Slices of the histogram a tier's members are counted in, along the
/// cut axis.
const SLICES: usize = 4096;

/// A split of a tier's members into slabs along the axis where their
/// centers spread most, about as many members in each: the grids of a big
/// tier then cover disjoint regions (but for boxes that cross a cut), and
/// a re-indexed proxy's query skips every grid whose bounds it misses. Cut
/// by slot ranges instead, every grid would cover the whole world, and
/// each query would walk them all.
struct Slabs {
    axis: usize,
    low: f32,
    /// Slices per unit of the axis.
    scale: f32,
    /// The first slice of each slab past the first.
    firsts: [usize; MAX_PARTS - 1],
    count: usize,
}

impl Slabs {
    /// Slabs along the axis where the members' centers (`low..high`, of
    /// `members` members) spread most, for `parts` grids, not yet cut;
    /// `None` when they cannot be (their centers all in one point).
    fn along(low: Vec3, high: Vec3, members: usize, parts: usize) -> Option<Self> {
        let spread = high - low;
        let axis = spread.max_position();
        let width = spread[axis];
        if !(width > 0.0 && width.is_finite()) || members < parts {
            return None;
        }
        Some(Self {
            axis,
            low: low[axis],
            scale: SLICES as f32 / width,
            firsts: [usize::MAX; MAX_PARTS - 1],
            count: parts,
        })
    }

    /// The slabs cut at the members' `histogram` (per slice, `members` in
    /// all); `None` when the members cannot be cut evenly (crowded in a
    /// few slices): then the caller cuts by slot ranges.
    fn cut(mut self, histogram: &[u32], members: usize) -> Option<Self> {
        let parts = self.count;
        // Slab k starts at the first slice where the members before it
        // reach k shares; no slab may hold more than one and a half
        // shares (the slowest grid sets the build's time).
        let share = members.div_ceil(parts);
        let (mut seen, mut slab, mut in_slab) = (0usize, 0usize, 0usize);
        for (slice, &count) in histogram.iter().enumerate() {
            if slab + 1 < parts && seen >= (slab + 1) * members / parts {
                self.firsts[slab] = slice;
                slab += 1;
                in_slab = 0;
            }
            seen += count as usize;
            in_slab += count as usize;
            if in_slab > share + share / 2 {
                return None;
            }
        }
        (slab + 1 == parts).then_some(self)
    }

    #[inline]
    fn slice_of(&self, aabb: &Aabb) -> usize {
        // A NaN (never, for valid boxes) or negative product casts to 0.
        (((center(aabb)[self.axis] - self.low) * self.scale) as usize).min(SLICES - 1)
    }

    /// The slab, so the grid, that takes a member indexed by `aabb`.
    #[inline]
    fn part_of(&self, aabb: &Aabb) -> usize {
        self.part_of_slice(self.slice_of(aabb))
    }

    /// The slab that holds slice `slice`.
    #[inline]
    fn part_of_slice(&self, slice: usize) -> usize {
        self.firsts[..self.count - 1].iter().filter(|&&first| slice >= first).count()
    }
}

/// A box's center, without overflow for boxes near the ends of the range.
#[inline]
fn center(aabb: &Aabb) -> Vec3 {
    aabb.min * 0.5 + aabb.max * 0.5
}

/// The two tiers of enlarged boxes.
#[derive(Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct FatIndex {
    config: GridConfig,
    tiers: [Tier; 2],
}

/// `clone_from` copies into the index's own buffers (see [`Tier`]): a
/// snapshot keeps the index this way, and a restore puts it back, so the
/// update after a restore finds the index as the update after the
/// snapshot did.
impl Clone for FatIndex {
    fn clone(&self) -> Self {
        let mut copy = Self::new(self.config);
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        if self.config != source.config {
            // Spare grids of another tuning would be rebuilt under it.
            self.tiers.iter_mut().for_each(|tier| tier.parts.clear());
        }
        self.config = source.config;
        for (tier, from) in self.tiers.iter_mut().zip(&source.tiers) {
            tier.clone_from(from);
        }
    }
}

impl FatIndex {
    pub(crate) fn new(config: GridConfig) -> Self {
        Self { config, tiers: [Tier::new(TierKind::Resting), Tier::new(TierKind::Moving)] }
    }

    /// Builds every tier that has no grids (never built, or dropped by a
    /// full update), for queries.
    pub(crate) fn ensure_built(
        &mut self,
        jobs: &JobSystem,
        slots: &Slots,
    ) -> Result<(), PartitionError> {
        for tier in &mut self.tiers {
            if !tier.built {
                tier.rebuild(self.config, jobs, slots)?;
            }
        }
        Ok(())
    }

    /// Calls `each(grid, slot_of, current)` for every grid of the built
    /// tiers: `slot_of` maps the grid's indices to slots, `current` says
    /// whether a slot's entry there is current.
    pub(crate) fn for_each_grid(
        &self,
        mut each: impl FnMut(&AdaptiveGrid, &[u32], &dyn Fn(usize) -> bool),
    ) {
        for tier in self.tiers.iter().filter(|tier| tier.built) {
            let current = |slot: usize| tier.is_current(slot);
            for part in &tier.parts[..tier.used] {
                each(&part.grid, &part.ids, &current);
            }
        }
    }

    /// Appends to `out` every live slot with no current entry in the tier
    /// of its kind (its stale list), leaving out those `skip` names.
    pub(crate) fn stale_live(
        &self,
        slots: &Slots,
        skip: impl Fn(u32) -> bool,
        out: &mut Pool<u32>,
    ) {
        for tier in &self.tiers {
            out.extend(tier.own(slots, &tier.stale).filter(|&slot| !skip(slot)));
        }
    }

    /// Drops the grids: every entry is stale (after a full recomputation).
    pub(crate) fn invalidate(&mut self) {
        self.tiers.iter_mut().for_each(Tier::invalidate);
    }

    /// Readies the index for this update's queries: rebuilds each tier
    /// that asks for it (never built, or its debt reached its size), and
    /// marks the re-indexed slots stale in the others. Returns whether a
    /// tier was rebuilt.
    pub(crate) fn prepare(
        &mut self,
        jobs: &JobSystem,
        slots: &Slots,
        moved: &[u32],
    ) -> Result<bool, PartitionError> {
        let mut rebuilt = false;
        for tier in &mut self.tiers {
            tier.rebuilt_now = false;
            tier.dropped_now = false;
            let count = tier.kind.count(slots);
            let moved_here = moved.iter().filter(|&&s| tier.kind.holds(slots, s as usize)).count();
            if count > 0 && moved_here * 2 >= count {
                // Most of the tier is re-indexed (the few moving proxies
                // of a resting world, all moved): its grid would answer
                // stale entries only. Its members pair among themselves
                // in the stale pass instead, as a full update would.
                tier.invalidate();
                tier.dropped_now = true;
                continue;
            }
            // (An empty tier with nothing stale stays as it is: a debt of
            // 0 reaches a size of 0.)
            if !tier.built || (tier.debt > 0 && tier.debt >= count as u64) {
                crate::profile::zone!("persistent: rebuild index");
                tier.rebuild(self.config, jobs, slots)?;
                tier.rebuilt_now = true;
                rebuilt = true;
            } else {
                for &slot in moved {
                    tier.mark_stale(slots, slot);
                }
            }
        }
        Ok(rebuilt)
    }

    /// Replaces `boxes` and `ids` with the proxies to pair among
    /// themselves: every live proxy with no current entry (stale in the
    /// tier of its kind, or of a tier this update dropped), and every
    /// re-indexed one (`moved`; those of a tier rebuilt by this update are
    /// current, but a proxy stale in the other tier can only meet them
    /// here, as it does not query). Charges each tier for its stale
    /// proxies.
    pub(crate) fn gather_stale(
        &mut self,
        slots: &Slots,
        moved: &[u32],
        boxes: &mut Pool<Aabb>,
        ids: &mut AlignedColumn<u32>,
    ) {
        boxes.reset();
        ids.clear();
        for tier in &mut self.tiers {
            if tier.dropped_now {
                let kind = tier.kind;
                let (marks, holds) =
                    (|word| kind.candidates(slots, word), |s| kind.holds(slots, s));
                slots.gather_marked(0..slots.len(), marks, holds, boxes, ids);
                continue;
            }
            let before = ids.len();
            for slot in tier.own(slots, &tier.stale) {
                boxes.push(slots.indexed()[slot as usize]);
                ids.push(slot);
            }
            tier.debt += (ids.len() - before) as u64;
            // Re-indexed proxies of a tier rebuilt now are in no stale
            // list: add them (the others were marked stale, and are in).
            if tier.rebuilt_now {
                for slot in tier.own(slots, moved) {
                    boxes.push(slots.indexed()[slot as usize]);
                    ids.push(slot);
                }
            }
        }
    }
}

/// One query job's results, kept across updates.
#[derive(Debug, Default)]
pub(crate) struct QueryChunk {
    /// A `Vec`: the kernel's grid query fills it through its public
    /// `&mut Vec` interface.
    hits: Vec<u32>,
    pub(crate) pairs: Pool<[u32; 2]>,
    pub(crate) failure: Option<InputError>,
}

impl QueryChunk {
    /// The pairs of `moved` (some re-indexed proxies) with the proxies
    /// whose entry in `index` is current, each re-indexed proxy's enlarged
    /// box against every grid.
    pub(crate) fn query(&mut self, moved: &[u32], slots: &Slots, index: &FatIndex) {
        crate::profile::zone!("persistent: query");
        let QueryChunk { hits, pairs, failure } = self;
        pairs.reset();
        *failure = None;
        for &slot in moved {
            let s = slot as usize;
            let is_static = slots.state[s] == SlotState::Static;
            for tier in &index.tiers {
                for part in &tier.parts[..tier.used] {
                    if !part.bounds.overlaps(&slots.indexed()[s]) {
                        continue;
                    }
                    if let Err(e) = part.grid.query_aabb(&slots.indexed()[s], hits) {
                        *failure = Some(e);
                        return;
                    }
                    for &hit in hits.iter() {
                        let other = part.ids[hit as usize];
                        let o = other as usize;
                        let state = slots.state[o];
                        // Pairs with a stale entry or another re-indexed
                        // proxy come from the pass among those (each pair
                        // once): a query keeps the current, unmoved ones.
                        let keep = state.is_live()
                            && tier.is_current(o)
                            && !slots.queued.get(o)
                            && !(is_static && state == SlotState::Static)
                            && !slots.same_group(s, o);
                        if keep {
                            pairs.push(if slot < other { [slot, other] } else { [other, slot] });
                        }
                    }
                }
            }
        }
    }
}

/// Checks of an index read from bytes (see `serialize.rs`).
#[cfg(feature = "serde")]
impl FatIndex {
    /// Whether the index holds the invariants every later update and
    /// query relies on, against `slots` and the grid tuning `config` the
    /// broad phase will have: a static and a dynamic tier, grids of that
    /// tuning whose ids name slots the tier marks as its members, marks
    /// no longer than the slots, each stale slot listed once, and every
    /// current entry's box holding the slot's box unless it is queued. The grids
    /// themselves were rebuilt from their boxes when read, so they hold
    /// their own invariants.
    pub(crate) fn check(&self, config: GridConfig, slots: &Slots) -> Result<(), &'static str> {
        if self.config != config {
            return Err("the index was built under another grid tuning");
        }
        let kinds = [TierKind::Resting, TierKind::Moving];
        for (tier, kind) in self.tiers.iter().zip(kinds) {
            if tier.kind != kind {
                return Err("an index tier holds the wrong kind");
            }
            tier.check(config, slots)?;
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl Tier {
    fn check(&self, config: GridConfig, slots: &Slots) -> Result<(), &'static str> {
        let n = slots.len();
        if self.number == 0 || self.used > self.parts.len() {
            return Err("an index tier's build number or grid count is out of range");
        }
        if self.dirty.len() > n || self.member.len() > n.div_ceil(64) {
            return Err("an index tier's marks are longer than the slots");
        }
        let past_end = |w: &u64| w >> (n % 64) != 0;
        if !n.is_multiple_of(64)
            && self.member.len() == n.div_ceil(64)
            && self.member.last().is_some_and(past_end)
        {
            return Err("an index tier marks a member past the slots");
        }
        for part in &self.parts[..self.used] {
            if *part.grid.config() != config || part.ids.len() != part.grid.len() {
                return Err("an index grid does not match its tuning or its slots");
            }
            for (&slot, aabb) in part.ids.iter().zip(part.grid.kept_boxes()) {
                let s = slot as usize;
                if s >= self.dirty.len() || !self.is_member(s) {
                    return Err("an index grid holds a slot that is not its tier's member");
                }
                // A queued slot is re-indexed by the next update; any
                // other current entry must hold the slot's box.
                let current = self.is_current(s) && self.kind.holds(slots, s);
                if current && !slots.queued.get(s) && !contains(aabb, &slots.boxes[s]) {
                    return Err("an index grid holds a current slot by a box without it");
                }
            }
        }
        let mut seen = vec![false; self.dirty.len()];
        for &slot in &self.stale {
            let s = slot as usize;
            if s >= self.dirty.len() || self.is_current(s) || core::mem::replace(&mut seen[s], true)
            {
                return Err("an index tier's stale list is out of range, unmarked or repeats");
            }
        }
        let marked = self.dirty.iter().filter(|&&mark| mark == self.number).count();
        if self.built && marked != self.stale.len() {
            return Err("an index tier's stale marks and list differ");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every grid of every tier, spare ones included.
    fn configs(index: &FatIndex) -> Vec<GridConfig> {
        index.tiers.iter().flat_map(|tier| &tier.parts).map(|part| *part.grid.config()).collect()
    }

    fn with_spare_parts(config: GridConfig) -> FatIndex {
        let mut index = FatIndex::new(config);
        for tier in &mut index.tiers {
            tier.parts.extend((0..3).map(|_| Part::new(config)));
        }
        index
    }

    #[test]
    fn a_copy_of_another_tuning_keeps_no_spare_grid_of_the_old_one() {
        // A later build with more threads would use the spare grids as
        // they are: they must not keep the tuning the index no longer has.
        let old = GridConfig { leaf_capacity: 3, ..GridConfig::default() };
        let mut index = with_spare_parts(old);
        index.clone_from(&FatIndex::new(GridConfig::default()));
        assert_eq!(index.config, GridConfig::default());
        assert!(configs(&index).iter().all(|&c| c == GridConfig::default()));
    }

    /// A tier of `boxes` as dynamic slots, built.
    fn built(boxes: &[Aabb], jobs: &JobSystem) -> (FatIndex, Slots) {
        let mut slots = Slots::new(true);
        for &b in boxes {
            slots.insert(b, b, super::super::slots::ProxyKind::Dynamic);
        }
        let mut index = FatIndex::new(GridConfig::default());
        index.ensure_built(jobs, &slots).unwrap();
        (index, slots)
    }

    /// The slots each part's grid finds over `query`, part by part.
    fn answers(index: &FatIndex, query: &Aabb) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        for part in index.tiers.iter().flat_map(|tier| &tier.parts[..tier.used]) {
            let mut hits = Vec::new();
            part.grid.query_aabb(query, &mut hits).unwrap();
            let mut slots: Vec<u32> = hits.iter().map(|&h| part.ids[h as usize]).collect();
            slots.sort_unstable();
            out.push(slots);
        }
        out
    }

    #[test]
    fn a_copy_skips_only_the_build_it_holds_already() {
        let jobs = JobSystem::new(1);
        let cubes = |at: f32| -> Vec<Aabb> {
            (0..50)
                .map(|i| {
                    Aabb::new(
                        glam::Vec3::splat(at + i as f32),
                        glam::Vec3::splat(at + i as f32 + 1.5),
                    )
                })
                .collect()
        };
        let everything = Aabb::new(glam::Vec3::splat(-1e3), glam::Vec3::splat(1e3));
        let (first, _) = built(&cubes(0.0), &jobs);
        let mut copy = first.clone();
        assert_eq!(answers(&copy, &everything), answers(&first, &everything));
        // Another build, even of the same boxes, has another stamp: copied.
        let (second, _) = built(&cubes(100.0), &jobs);
        copy.clone_from(&second);
        assert_eq!(answers(&copy, &everything), answers(&second, &everything));
        let near_second = Aabb::new(glam::Vec3::splat(99.0), glam::Vec3::splat(110.0));
        assert!(!answers(&copy, &near_second).concat().is_empty(), "the second build's grid");
        // The same build again: nothing to copy, the answers stay.
        copy.clone_from(&second);
        assert_eq!(answers(&copy, &everything), answers(&second, &everything));
        let stamps = |index: &FatIndex| -> Vec<u64> {
            index.tiers.iter().flat_map(|t| &t.parts[..t.used]).map(|p| p.build).collect()
        };
        assert_eq!(stamps(&copy), stamps(&second));
        assert_ne!(stamps(&first), stamps(&second));
    }

    /// `count` dynamic slots of `boxes` (cycled) and the members of the
    /// moving tier, cut for `parts` grids.
    fn slabs_of(boxes: &[Aabb], parts: usize) -> (Slots, Option<Slabs>) {
        let mut slots = Slots::new(true);
        for &b in boxes {
            slots.insert(b, b, super::super::slots::ProxyKind::Dynamic);
        }
        let kind = TierKind::Moving;
        let mut scan = Scan { range: 0..slots.len(), ..Scan::default() };
        scan.bounds(&slots, kind);
        let slabs = Slabs::along(scan.low, scan.high, scan.members, parts).and_then(|slabs| {
            scan.count(&slots, kind, &slabs);
            slabs.cut(&scan.histogram, scan.members)
        });
        (slots, slabs)
    }

    #[test]
    fn slabs_cut_the_widest_axis_into_even_shares() {
        // Centers spread 0..1000 on y, 0..10 on x and z.
        let boxes: Vec<Aabb> = (0..3000)
            .map(|i| {
                let at = glam::Vec3::new((i % 10) as f32, (i * 7 % 1000) as f32, (i % 3) as f32);
                Aabb::new(at, at + 1.0)
            })
            .collect();
        for parts in [2, 3, 16] {
            let (_, slabs) = slabs_of(&boxes, parts);
            let slabs = slabs.expect("an even spread cuts");
            assert_eq!(slabs.axis, 1);
            let mut counts = vec![0usize; parts];
            for b in &boxes {
                counts[slabs.part_of(b)] += 1;
            }
            let share = boxes.len() / parts;
            assert!(
                counts.iter().all(|&c| c * 10 >= share * 9 && c * 10 <= share * 11),
                "{parts} parts: {counts:?}"
            );
            // Slabs in order along the axis: a box's slab never decreases
            // as its center moves up.
            let at = |y: f32| {
                slabs.part_of(&Aabb::new(
                    glam::Vec3::new(0.0, y, 0.0),
                    glam::Vec3::new(1.0, y + 1.0, 1.0),
                ))
            };
            assert!((0..1000).map(|y| at(y as f32)).collect::<Vec<_>>().is_sorted());
        }
    }

    #[test]
    fn members_that_cannot_be_cut_evenly_are_not_cut_in_slabs() {
        let unit = Aabb::new(glam::Vec3::ZERO, glam::Vec3::ONE);
        // Every center in one point.
        assert!(slabs_of(&[unit; 100], 2).1.is_none());
        // Fewer members than grids.
        let two = [unit, Aabb::new(glam::Vec3::splat(5.0), glam::Vec3::splat(6.0))];
        assert!(slabs_of(&two, 4).1.is_none());
        // All but one in one slice: one slab would hold them all.
        let mut crowded = vec![unit; 99];
        crowded.push(Aabb::new(glam::Vec3::splat(1e6), glam::Vec3::splat(1e6 + 1.0)));
        assert!(slabs_of(&crowded, 2).1.is_none());
        // Boxes spanning the whole range: centers at 0, no spread.
        let huge = Aabb::new(glam::Vec3::splat(f32::MIN), glam::Vec3::splat(f32::MAX));
        assert!(slabs_of(&[huge; 10], 2).1.is_none());
    }

    #[test]
    fn a_big_tier_is_built_in_slabs_that_hold_each_member_once() {
        let jobs = JobSystem::new(2);
        let boxes = broadphase_scenes::uniform(2 * PART_MIN + 1000, 5).boxes;
        let (mut index, slots) = built(&boxes, &jobs);
        assert_in_slabs(&index, &slots);
        // Rebuilt over the same boxes, over boxes moved a little (the last
        // cut's bounds still cut them) and over boxes moved far away (the
        // bounds are measured again): the same guarantees each time.
        for shift in [0.0, 3.0, 1e5] {
            let moved: Vec<Aabb> = boxes
                .iter()
                .map(|b| Aabb::new(b.min + glam::Vec3::X * shift, b.max + glam::Vec3::X * shift))
                .collect();
            let mut slots = Slots::new(true);
            for &b in &moved {
                slots.insert(b, b, super::super::slots::ProxyKind::Dynamic);
            }
            index.invalidate();
            index.ensure_built(&jobs, &slots).unwrap();
            assert_in_slabs(&index, &slots);
        }
    }

    /// The moving tier of `index` is two grids cut in slabs: each member
    /// in exactly one, each list in slot order with its members' boxes
    /// and their member bits, and the grids' bounds overlapping in a thin
    /// slab only.
    fn assert_in_slabs(index: &FatIndex, slots: &Slots) {
        let tier = &index.tiers[1];
        assert_eq!(tier.used, 2);
        let mut seen = vec![0u8; slots.len()];
        for part in &tier.parts[..tier.used] {
            for &slot in &part.ids {
                seen[slot as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "every member in exactly one grid");
        // Gathered on both threads by slot range, each grid's list is still
        // in slot order, with each member's own box, and its member bit.
        for part in &tier.parts[..tier.used] {
            assert!(part.ids.windows(2).all(|w| w[0] < w[1]), "a grid's slots in order");
            for (&slot, aabb) in part.ids.iter().zip(part.gathered.iter()) {
                assert_eq!(*aabb, slots.indexed()[slot as usize]);
            }
        }
        assert!((0..slots.len()).all(|slot| tier.is_member(slot)), "every member's bit");
        // The grids' bounds overlap in a slab as thin as the boxes are
        // wide, not over the whole world.
        let [first, second] = [&tier.parts[0].bounds, &tier.parts[1].bounds];
        let overlap = first.max.min(second.max) - first.min.max(second.min);
        let world = first.max.max(second.max) - first.min.min(second.min);
        assert!(overlap.min_element() < world.max_element() / 20.0, "{overlap} of {world}");
    }

    #[test]
    fn query_jobs_share_the_re_indexed_proxies_evenly() {
        assert_eq!(query_chunk(1100, 2), 275);
        assert_eq!(query_chunk(1100, 1), 550);
        assert_eq!(query_chunk(100_000, 2), QUERY_CHUNK);
        assert_eq!(query_chunk(300, 8), QUERY_CHUNK_MIN);
        assert_eq!(query_chunk(0, 2), QUERY_CHUNK_MIN);
    }

    #[test]
    fn a_copy_of_the_same_tuning_keeps_the_spare_grids() {
        let mut index = with_spare_parts(GridConfig::default());
        index.clone_from(&FatIndex::new(GridConfig::default()));
        assert_eq!(configs(&index).len(), 6);
    }
}
