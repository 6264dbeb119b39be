//! How a walk hands on the pairs it finds: one call per pair, a slice at
//! a time, or straight into a `Vec`.

/// Pairs a batch holds before it is handed on: 2 KiB, which stays in L1.
const BATCH: usize = 256;

/// Where a walk's pairs go; the walk makes an [`Emit`] of it in its own
/// frame.
pub(crate) trait PairSink {
    /// What the walk calls per pair.
    type Emitter<'a>: Emit
    where
        Self: 'a;

    fn emitter(&mut self) -> Self::Emitter<'_>;
}

/// Takes a walk's pairs one at a time.
pub(crate) trait Emit {
    /// The pair of caller indices `a` and `b` (either order).
    fn pair(&mut self, a: u32, b: u32);

    /// The pairs of particle `a` with each of `partners`, in that order
    /// (caller indices): one particle's row of a block walk.
    #[inline(always)]
    fn row(&mut self, a: u32, partners: &[u32]) {
        for &b in partners {
            self.pair(a, b);
        }
    }

    /// Hands on whatever is held: the walk calls it before it hands its
    /// pairs to another walk, and when it ends.
    fn flush(&mut self);
}

/// `f(a, b)`, lower index first, once per pair.
pub(crate) struct EachPair<F: FnMut(u32, u32)>(pub(crate) F);

/// [`EachPair`]'s emitter.
pub(crate) struct EachPairEmitter<'a, F: FnMut(u32, u32)>(&'a mut F);

impl<F: FnMut(u32, u32)> PairSink for EachPair<F> {
    type Emitter<'a>
        = EachPairEmitter<'a, F>
    where
        Self: 'a;

    #[inline(always)]
    fn emitter(&mut self) -> Self::Emitter<'_> {
        EachPairEmitter(&mut self.0)
    }
}

impl<F: FnMut(u32, u32)> Emit for EachPairEmitter<'_, F> {
    #[inline(always)]
    fn pair(&mut self, a: u32, b: u32) {
        (self.0)(a.min(b), a.max(b));
    }

    #[inline(always)]
    fn flush(&mut self) {}
}

/// `f(pairs)` with a slice of `[a, b]` (`a < b`) at a time.
pub(crate) struct PairBatches<F: FnMut(&[[u32; 2]])>(pub(crate) F);

impl<F: FnMut(&[[u32; 2]])> PairSink for PairBatches<F> {
    type Emitter<'a>
        = PairBatch<'a, F>
    where
        Self: 'a;

    #[inline(always)]
    fn emitter(&mut self) -> Self::Emitter<'_> {
        PairBatch { pairs: [[0; 2]; BATCH], len: 0, sink: &mut self.0 }
    }
}

/// Pairs collected in the walk's own frame and handed on a slice at a
/// time: the batch's length stays in a register, and the sink sees one
/// slice per [`BATCH`] pairs (a `Vec` it appends to is then touched once
/// per slice, not once per pair).
pub(crate) struct PairBatch<'a, F: FnMut(&[[u32; 2]])> {
    pairs: [[u32; 2]; BATCH],
    len: usize,
    sink: &'a mut F,
}

impl<F: FnMut(&[[u32; 2]])> Emit for PairBatch<'_, F> {
    #[inline(always)]
    fn pair(&mut self, a: u32, b: u32) {
        if self.len == BATCH {
            self.flush();
        }
        self.pairs[self.len] = [a.min(b), a.max(b)];
        self.len += 1;
    }

    #[inline(always)]
    fn flush(&mut self) {
        if self.len > 0 {
            (self.sink)(&self.pairs[..self.len]);
            self.len = 0;
        }
    }
}

/// The pairs appended to a `Vec`, `[a, b]` with `a < b`, grown into huge
/// pages where the system offers them (see
/// [`broadphase_storage::reserve_huge`]).
///
/// A row of a block walk is appended in one call: one capacity check and
/// a loop of lookups and stores, where a push per pair checked the
/// capacity and stored the length each time (sph1m, 15 million pairs: the
/// pushes alone were about a sixth of the walk).
pub(crate) struct PairVec<'a>(pub(crate) &'a mut Vec<[u32; 2]>);

impl PairSink for PairVec<'_> {
    type Emitter<'a>
        = PairVecEmitter<'a>
    where
        Self: 'a;

    #[inline(always)]
    fn emitter(&mut self) -> Self::Emitter<'_> {
        PairVecEmitter(self.0)
    }
}

/// [`PairVec`]'s emitter.
pub(crate) struct PairVecEmitter<'a>(&'a mut Vec<[u32; 2]>);

impl Emit for PairVecEmitter<'_> {
    #[inline(always)]
    fn pair(&mut self, a: u32, b: u32) {
        let len = self.0.len();
        broadphase_storage::reserve_huge(self.0, len + 1);
        self.0.push([a.min(b), a.max(b)]);
    }

    #[inline(always)]
    fn row(&mut self, a: u32, partners: &[u32]) {
        // Most rows of a sparse scene are empty.
        if partners.is_empty() {
            return;
        }
        let len = self.0.len();
        broadphase_storage::reserve_huge(self.0, len + partners.len());
        self.0.extend(partners.iter().map(|&b| [a.min(b), a.max(b)]));
    }

    #[inline(always)]
    fn flush(&mut self) {}
}
