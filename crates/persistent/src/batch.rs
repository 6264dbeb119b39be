//! The answers of a batch of queries on the persistent broad phase, and
//! the loop that fills them on all threads: each job answers a run of
//! queries into lists of its own, and the lists, in input order, become
//! one CSR answer (`offsets`, `items`).

use super::slots::Proxy;
use broadphase_jobs::JobSystem;
use broadphase_partition::BatchError;

/// A batch of at most this many queries is one piece, and a piece per
/// this many more: enough to outweigh handing a job out.
pub(crate) const CHUNK: usize = 256;

/// Most pieces a batch is cut into.
const MAX_PIECES: usize = 64;

/// What one job's queries reuse from one query to the next, kept with
/// its piece so that a warm batch allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// A grid's box or region answer.
    pub(crate) ids: Vec<u32>,
    /// A grid's all-hits ray answer.
    pub(crate) grid_hits: Vec<(u32, f32)>,
    /// One shape query's proxies, before the caller's map.
    pub(crate) proxies: Vec<Proxy>,
    /// One ray's hits, before the caller's map.
    pub(crate) ray_hits: Vec<(Proxy, f32)>,
}

/// One job's answers: the items of its queries, one after the other, and
/// how many each had.
#[derive(Debug)]
struct Piece<T> {
    items: Vec<T>,
    counts: Vec<u32>,
    scratch: Scratch,
}

impl<T> Default for Piece<T> {
    fn default() -> Self {
        Self { items: Vec::new(), counts: Vec::new(), scratch: Scratch::default() }
    }
}

/// The answers of a batch of queries on a
/// [`QueryView`](crate::QueryView), in CSR form: the answer of query `i`
/// is `items()[offsets()[i]..offsets()[i + 1]]` ([`hits(i)`](Self::hits)),
/// in the order the single query gives it, the same on any thread count.
/// `T` is what a hit is: a [`Proxy`] for boxes, points, spheres and
/// regions, `(Proxy, f32)` (the proxy and where the ray enters its box)
/// for all-hits rays, or what the caller's map makes of them. The buffers
/// are kept, so a batch no larger than one before allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_persistent::{BatchAnswers, PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::Aabb;
/// use glam::Vec3;
/// let jobs = JobSystem::new(2);
/// let mut world = PersistentBroadPhase::default();
/// let a = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Static)?;
/// let b = world.insert(Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0)), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
/// let mut hits = BatchAnswers::default();
/// world.queries(&jobs)?.query_points(&jobs, &[Vec3::splat(0.5), Vec3::ONE, Vec3::splat(9.0)], &mut hits)?;
/// assert_eq!(hits.len(), 3);
/// assert_eq!(hits.hits(0), [a]);
/// assert_eq!(hits.hits(1), [a, b]); // the corner the two share
/// assert!(hits.hits(2).is_empty());
/// assert_eq!(hits.offsets(), [0, 1, 3, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BatchAnswers<T> {
    offsets: Vec<usize>,
    items: Vec<T>,
    pieces: Vec<Piece<T>>,
}

impl<T> Default for BatchAnswers<T> {
    fn default() -> Self {
        Self { offsets: Vec::new(), items: Vec::new(), pieces: Vec::new() }
    }
}

impl<T> BatchAnswers<T> {
    /// Queries answered by the last call.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the last call answered no query.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where each query's answer starts in [`items`](Self::items), and
    /// where the last ends: `len() + 1` entries (none after a refused
    /// call).
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Every query's answer, one query after the other.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The answer of query `query`.
    ///
    /// # Panics
    /// If `query >= len()`.
    pub fn hits(&self, query: usize) -> &[T] {
        &self.items[self.offsets[query]..self.offsets[query + 1]]
    }

    /// Empties the answer (as a refused call leaves it), keeping the
    /// buffers.
    pub fn clear(&mut self) {
        self.offsets.clear();
        self.items.clear();
    }
}

impl<T: Send> BatchAnswers<T> {
    /// Checks every query in order (`check(query, index)`, the first
    /// refusal refuses the batch), then answers them in pieces on `jobs`:
    /// `answer(index, query, scratch, items)` appends query `index`'s
    /// items.
    pub(crate) fn run<Q: Sync>(
        &mut self,
        jobs: &JobSystem,
        queries: &[Q],
        check: impl Fn(&Q, usize) -> Result<(), BatchError>,
        answer: impl Fn(usize, &Q, &mut Scratch, &mut Vec<T>) + Sync,
    ) -> Result<(), BatchError> {
        self.clear();
        for (index, query) in queries.iter().enumerate() {
            check(query, index)?;
        }
        // One piece per `CHUNK` queries begun, at most a few per thread
        // so that a slow piece does not hold the others up; each fills its own kept
        // buffers, joined in query order after. The cut depends on the
        // thread count, the answers do not: each query's is its own.
        let pieces = if jobs.threads() == 1 || queries.len() <= CHUNK {
            1
        } else {
            queries.len().div_ceil(CHUNK).min(MAX_PIECES).min(4 * jobs.threads())
        };
        while self.pieces.len() < pieces {
            self.pieces.push(Piece::default());
        }
        let piece_len = queries.len().div_ceil(pieces).max(1);
        let answered = jobs.for_each_mut(&mut self.pieces[..pieces], |piece, out| {
            crate::profile::zone!("persistent: batch queries");
            let Piece { items, counts, scratch } = out;
            items.clear();
            counts.clear();
            let start = (piece * piece_len).min(queries.len());
            let end = (start + piece_len).min(queries.len());
            for (index, query) in (start..end).zip(&queries[start..end]) {
                let before = items.len();
                answer(index, query, scratch, items);
                counts.push((items.len() - before) as u32);
            }
        });
        if let Err(e) = answered {
            self.clear();
            return Err(e.into());
        }
        self.offsets.push(0);
        let BatchAnswers { offsets, items, pieces: kept } = self;
        for piece in &mut kept[..pieces] {
            items.append(&mut piece.items);
            let mut at = *offsets.last().unwrap_or(&0);
            for &count in &piece.counts {
                at += count as usize;
                offsets.push(at);
            }
        }
        Ok(())
    }
}
