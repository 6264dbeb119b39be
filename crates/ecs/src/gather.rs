//! Reading boxes out of the world: the dynamic set each frame, the static
//! set when it changed, and the exact check that tells whether it did.
//!
//! An entity's box is its [`Aabb`] component if it has one, else its
//! [`Collider`] placed at its position component `P`. Entities with
//! [`Static`] go to the static set, those with [`Sleeping`] (and not
//! `Static`) to the sleeping set, the others to the dynamic set.
//!
//! The dynamic set's boxes are gathered only when its entities changed;
//! otherwise [`WorldBoxes`] makes them from the world's columns as the
//! broad phase sets them.
//!
//! Each column (entities, boxes, layers) is read in a pass of its own:
//! one tight loop per column is about twice as fast as one loop pushing to
//! three `Vec`s, which the compiler cannot keep in registers. Entities go
//! through hecs's batched query, boxes are made from each archetype's
//! columns, both in chunks on all threads (at a million entities, 1.3–1.5
//! and 2.8–3.4 ms on 2 threads, where the whole gather took 9.7–10.1 on
//! one); layers through hecs's per-archetype `fold` (`for_each`). Queries
//! and `World::archetypes` visit archetypes in the same order, so the
//! columns line up. The layer pass runs only when some entity of the set
//! has a layer component.
//!
//! The queries are plain `World::query_mut` calls: hecs 0.11 keeps each
//! query type's archetype list in the world itself (rebuilt only when an
//! archetype is added), so a warm call is one read lock and one hash
//! lookup, allocates nothing, and, unlike a stored `PreparedQuery`, leaves
//! the plugin `Send + Sync`.

use crate::{Collider, CollisionLayers, Position, Sleeping, Static};
use broadphase_jobs::{JobError, JobSystem};
use broadphase_persistent::{AabbSource, SOURCE_RUN};
use broadphase_storage::{Aabb, Pool};
use core::marker::PhantomData;
use core::ops::Range;
use hecs::{Entity, Query, With, Without, World};

/// Boxes made per job at least: below two chunks the calling thread makes
/// them alone.
const FILL_CHUNK: usize = 16 * 1024;

/// Selects the dynamic or the static entities of a query.
pub(crate) trait Kind {
    /// `Q` restricted to this kind's entities (same items as `Q`).
    type Of<Q: Query>: for<'a> Query<Item<'a> = Q::Item<'a>>;
}

/// Entities with neither [`Static`] nor [`Sleeping`] (a type-level tag,
/// never a value).
#[derive(Debug)]
pub(crate) enum Dynamic {}

/// Entities with [`Sleeping`] and without [`Static`] (a type-level tag,
/// never a value).
#[derive(Debug)]
pub(crate) enum Sleepers {}

/// Entities with [`Static`] (a type-level tag, never a value).
#[derive(Debug)]
pub(crate) enum Statics {}

impl Kind for Dynamic {
    type Of<Q: Query> = Without<Without<Q, &'static Static>, &'static Sleeping>;
}

impl Kind for Sleepers {
    type Of<Q: Query> = Without<With<Q, &'static Sleeping>, &'static Static>;
}

impl Kind for Statics {
    type Of<Q: Query> = With<Q, &'static Static>;
}

/// `Q` over this kind's entities that have an [`Aabb`].
type Boxed<K, Q> = <K as Kind>::Of<With<Q, &'static Aabb>>;
/// `Q` over this kind's entities with a position and a collider but no
/// [`Aabb`] (the box wins when both are present).
type Placed<K, P, Q> =
    <K as Kind>::Of<Without<With<Q, (&'static P, &'static Collider)>, &'static Aabb>>;

/// One set of gathered boxes, in the world's iteration order: parallel
/// arrays, kept across frames so a warm gather allocates nothing.
#[derive(Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Gathered {
    pub(crate) entities: Pool<Entity>,
    /// Given to the broad phase in one bulk set each run.
    pub(crate) boxes: Pool<Aabb>,
    /// One per entity when some entity of the set has a layer component;
    /// empty otherwise (every entity then has [`CollisionLayers::ALL`]).
    layers: Pool<CollisionLayers>,
    /// Whether any entity has layers other than [`CollisionLayers::ALL`]
    /// (when none has, the layer test is skipped).
    pub(crate) filtered: bool,
}

/// A snapshot's copy: `clone_from` copies into the columns already there.
impl Clone for Gathered {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.entities.clone_from(&source.entities);
        self.boxes.clone_from(&source.boxes);
        self.layers.clone_from(&source.layers);
        self.filtered = source.filtered;
    }
}

impl Gathered {
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether some entity of the set has a layer component.
    pub(crate) fn has_layers(&self) -> bool {
        !self.layers.is_empty()
    }

    /// The layers of entity `i`.
    #[inline]
    pub(crate) fn layers(&self, i: usize) -> CollisionLayers {
        if self.layers.is_empty() { CollisionLayers::ALL } else { self.layers[i] }
    }

    /// Replaces the set with every entity of kind `K`: its entities, then
    /// its boxes (see [`gather_entities`](Self::gather_entities) and
    /// [`gather_boxes`](Self::gather_boxes)).
    ///
    /// # Errors
    /// [`JobError`] if a job panicked (a game's [`Position`] may); the
    /// set is then half made and must be gathered again.
    pub(crate) fn gather<K: Kind, P: Position>(
        &mut self,
        world: &mut World,
        jobs: &JobSystem,
    ) -> Result<(), JobError> {
        self.gather_entities::<K, P>(world, jobs)?;
        self.gather_boxes::<K, P>(world, jobs)
    }

    /// Replaces the set's entities (and layers) with those of kind `K`,
    /// on all threads of `jobs`, each archetype's rows cut into chunks
    /// written in place (the entity pass took 3 ms on one thread at a
    /// million entities). The boxes are left as they were until
    /// [`gather_boxes`](Self::gather_boxes): a set whose entities did not
    /// change is given to the broad phase straight from the world
    /// ([`WorldBoxes`]).
    ///
    /// # Errors
    /// [`JobError`] if a job panicked (none can: the pass only reads
    /// entities).
    pub(crate) fn gather_entities<K: Kind, P: Position>(
        &mut self,
        world: &mut World,
        jobs: &JobSystem,
    ) -> Result<(), JobError> {
        self.layers.reset();
        let boxed = count_of::<Boxed<K, ()>>(world);
        let total = boxed + count_of::<Placed<K, P, ()>>(world);
        if self.entities.len() != total {
            self.entities.reset();
            self.entities.resize(total, Entity::DANGLING);
        }
        let (first, second) = self.entities.split_at_mut(boxed);
        fill_entities::<Boxed<K, Entity>, Boxed<K, ()>>(world, jobs, first)?;
        fill_entities::<Placed<K, P, Entity>, Placed<K, P, ()>>(world, jobs, second)?;

        self.filtered = false;
        if has_layers::<K, P>(world) {
            let layers = &mut self.layers;
            let mut filtered = false;
            let mut push = |l: Option<&CollisionLayers>| {
                let l = l.copied().unwrap_or_default();
                filtered |= l != CollisionLayers::ALL;
                layers.push(l);
            };
            world.query_mut::<Boxed<K, Option<&CollisionLayers>>>().into_iter().for_each(&mut push);
            world
                .query_mut::<Placed<K, P, Option<&CollisionLayers>>>()
                .into_iter()
                .for_each(&mut push);
            self.filtered = filtered;
            debug_assert_eq!(self.entities.len(), self.layers.len());
        }
        Ok(())
    }

    /// Writes the box of every entity listed in `entities`, in the same
    /// order ([`WorldBoxes`] walks the archetypes as the queries visit
    /// them), in chunks on all threads of `jobs` (at a
    /// million entities the pass reads 36 bytes and writes 24 per entity,
    /// more than one core's bandwidth). A warm frame of the same size
    /// overwrites last frame's boxes in place (no clearing pass).
    ///
    /// # Errors
    /// [`JobError`] if a job panicked (a game's [`Position`] may).
    pub(crate) fn gather_boxes<K: Kind, P: Position>(
        &mut self,
        world: &World,
        jobs: &JobSystem,
    ) -> Result<(), JobError> {
        let total = self.entities.len();
        if self.boxes.len() != total {
            self.boxes.reset();
            self.boxes.resize(total, Aabb::default());
        }
        let source = WorldBoxes::<K, P>::new(world, total);
        jobs.for_each_chunk_mut(&mut self.boxes, FILL_CHUNK, |range, out| {
            source.write(range.start, out);
        })
    }

    /// Whether `gather::<K, P>` would list exactly these entities (id and
    /// generation) in this order, whatever their boxes and layers: one
    /// streaming pass with no branch per entity.
    pub(crate) fn same_entities_as<K: Kind, P: Position>(&self, world: &mut World) -> bool {
        if count::<K, P>(world) != self.len() {
            return false;
        }
        let (mut same, mut k) = (true, 0);
        let stored = &self.entities;
        let mut check = |e: Entity| {
            same &= stored[k] == e;
            k += 1;
        };
        world.query_mut::<Boxed<K, Entity>>().into_iter().for_each(&mut check);
        world.query_mut::<Placed<K, P, Entity>>().into_iter().for_each(&mut check);
        same
    }

    /// Whether `gather::<K, P>` would produce exactly this set: same
    /// entities (id and generation) in the same order, same boxes, same
    /// layers.
    ///
    /// Exact: a moved box, a layer change, a `Static` added or removed, a
    /// spawn, a despawn — even one whose id is reused in the same archetype
    /// slot in the same frame (the generation differs) — all differ. One
    /// streaming pass per column, through hecs's `fold`, with no branch per
    /// entity; it stops after the first column that differs. Boxes are
    /// compared by their bits (a `-0.0` that became `0.0` counts as a
    /// change, which costs one re-index and nothing else).
    pub(crate) fn same_as<K: Kind, P: Position>(&self, world: &mut World) -> bool {
        if !self.same_entities_as::<K, P>(world) {
            return false;
        }
        let boxed = world.query_mut::<Boxed<K, ()>>().into_iter().len();
        let (mut same, (stored_boxed, stored_placed)) = (true, self.boxes.split_at(boxed));
        let mut stored = stored_boxed.iter();
        world.query_mut::<Boxed<K, &Aabb>>().into_iter().for_each(|b| {
            same &= stored.next().is_some_and(|s| same_bits(s, b));
        });
        let mut stored = stored_placed.iter();
        world.query_mut::<Placed<K, P, (&P, &Collider)>>().into_iter().for_each(|(p, c)| {
            same &= stored.next().is_some_and(|s| same_bits(s, &c.aabb_at(p.position())));
        });
        if !same {
            return false;
        }

        if !has_layers::<K, P>(world) {
            return self.layers.is_empty();
        }
        if self.layers.is_empty() {
            return false;
        }
        let mut stored = self.layers.iter();
        let mut check = |l: Option<&CollisionLayers>| {
            same &= stored.next() == Some(&l.copied().unwrap_or_default());
        };
        world.query_mut::<Boxed<K, Option<&CollisionLayers>>>().into_iter().for_each(&mut check);
        world
            .query_mut::<Placed<K, P, Option<&CollisionLayers>>>()
            .into_iter()
            .for_each(&mut check);
        same
    }
}

/// The boxes of kind `K`'s entities, made from the world's columns as
/// the broad phase writes them, in the order [`Gathered::gather`] lists
/// the entities: no box array in between (at a million entities that
/// array is 24 MB written, then read twice: to check it and to set it).
///
/// Each visit finds its archetypes again and borrows their columns for
/// as long as it reads them, so the source holds nothing across frames
/// and works with any number of archetypes.
pub(crate) struct WorldBoxes<'w, K, P> {
    world: &'w World,
    len: usize,
    kind: PhantomData<fn() -> (K, P)>,
}

impl<'w, K: Kind, P: Position> WorldBoxes<'w, K, P> {
    /// The source of a set of `len` entities just gathered from `world`.
    pub(crate) fn new(world: &'w World, len: usize) -> Self {
        Self { world, len, kind: PhantomData }
    }
}

impl<K: Kind, P: Position> AabbSource for WorldBoxes<'_, K, P> {
    fn len(&self) -> usize {
        self.len
    }

    fn write(&self, first: usize, out: &mut [Aabb]) {
        self.walk(first..first + out.len(), |start, run| {
            let out = &mut out[start - first..];
            match run {
                Run::Boxes(boxes) => out[..boxes.len()].copy_from_slice(boxes),
                Run::Placed(positions, colliders) => {
                    let placed = positions.iter().zip(colliders);
                    for (out, (p, c)) in out.iter_mut().zip(placed) {
                        *out = c.aabb_at(p.position());
                    }
                }
            }
        });
    }

    /// Finds the archetypes once per call: an `Aabb` column is handed
    /// over as it is, placed boxes are made into a buffer a run at a time.
    fn write_runs(&self, range: Range<usize>, mut run: impl FnMut(usize, &[Aabb])) {
        let mut buffer = [Aabb::default(); SOURCE_RUN];
        self.walk(range, |start, part| match part {
            Run::Boxes(boxes) => run(start, boxes),
            Run::Placed(positions, colliders) => {
                let runs = positions.chunks(SOURCE_RUN).zip(colliders.chunks(SOURCE_RUN));
                for (k, (positions, colliders)) in runs.enumerate() {
                    let boxes = &mut buffer[..positions.len()];
                    for (out, (p, c)) in boxes.iter_mut().zip(positions.iter().zip(colliders)) {
                        *out = c.aabb_at(p.position());
                    }
                    run(start + k * SOURCE_RUN, boxes);
                }
            }
        });
    }
}

/// A run of one archetype's rows, as [`WorldBoxes::walk`] hands it over.
enum Run<'a, P> {
    /// The rows' `Aabb` column.
    Boxes(&'a [Aabb]),
    /// The rows' position and collider columns.
    Placed(&'a [P], &'a [Collider]),
}

impl<K: Kind, P: Position> WorldBoxes<'_, K, P> {
    /// Calls `visit` with the part of each archetype that falls in `range`
    /// (gather positions), in gather order, with the position of its first
    /// row: the archetypes with an `Aabb` first, then the placed ones, each
    /// kind in the world's order, as the queries visit them.
    fn walk(&self, range: Range<usize>, mut visit: impl FnMut(usize, Run<'_, P>)) {
        // `at` is the first entity of the archetype at hand.
        let mut at = 0;
        let archetypes = || self.world.archetypes().filter(|a| !a.is_empty());
        for archetype in archetypes().filter(|a| a.satisfies::<Boxed<K, ()>>()) {
            let rows = part_of(&range, at, archetype.len() as usize);
            let start = at + rows.start;
            at += archetype.len() as usize;
            // The filter asked for the column: it is there.
            if let (false, Some(column)) = (rows.is_empty(), archetype.get::<&Aabb>()) {
                visit(start, Run::Boxes(&column[rows]));
            }
        }
        for archetype in archetypes().filter(|a| a.satisfies::<Placed<K, P, ()>>()) {
            if at >= range.end {
                return;
            }
            let rows = part_of(&range, at, archetype.len() as usize);
            let start = at + rows.start;
            at += archetype.len() as usize;
            let columns = (archetype.get::<&P>(), archetype.get::<&Collider>());
            if let (false, (Some(positions), Some(colliders))) = (rows.is_empty(), columns) {
                visit(start, Run::Placed(&positions[rows.clone()], &colliders[rows]));
            }
        }
    }
}

/// The rows of an archetype of `len` entities, the first of them at `at`
/// in gather order, that fall in `range`.
fn part_of(range: &Range<usize>, at: usize, len: usize) -> Range<usize> {
    let start = range.start.clamp(at, at + len);
    let end = range.end.clamp(start, at + len);
    start - at..end - at
}

/// Entities an entity pass is cut into batches of.
const ENTITY_BATCH: u32 = 16 * 1024;

/// Most batches an entity pass hands to jobs; a world of more (many
/// archetypes of a few entities each) is read on the calling thread.
const MAX_ENTITY_BATCHES: usize = 64;

/// How many entities `Q` visits (one look at each archetype).
fn count_of<Q: Query>(world: &mut World) -> usize {
    world.query_mut::<Q>().into_iter().len()
}

/// Writes the entities query `Q` visits, in its order, into `out` (which
/// holds exactly as many): in batches of an archetype's rows on all
/// threads of `jobs` when there are enough. `Shape` is `Q` without its
/// item: the archetypes it matches, whose lengths cut `out`.
fn fill_entities<Q, Shape>(
    world: &mut World,
    jobs: &JobSystem,
    out: &mut [Entity],
) -> Result<(), JobError>
where
    Q: for<'a> Query<Item<'a> = Entity>,
    Shape: Query,
{
    // The batches hecs will hand out, in its order: each matching
    // archetype's rows, ENTITY_BATCH at a time.
    let mut lens = [0usize; MAX_ENTITY_BATCHES];
    let mut batches = 0;
    let matching = world.archetypes().filter(|a| !a.is_empty() && a.satisfies::<Shape>());
    for archetype in matching {
        let len = archetype.len() as usize;
        for start in (0..len).step_by(ENTITY_BATCH as usize) {
            if batches < MAX_ENTITY_BATCHES {
                lens[batches] = (len - start).min(ENTITY_BATCH as usize);
            }
            batches += 1;
        }
    }
    if !(2..=MAX_ENTITY_BATCHES).contains(&batches) || jobs.threads() == 1 {
        let mut at = 0;
        world.query_mut::<Q>().into_iter().for_each(|e| {
            out[at] = e;
            at += 1;
        });
        return Ok(());
    }
    let mut pieces: [Option<(hecs::Batch<'_, Q>, &mut [Entity])>; MAX_ENTITY_BATCHES] =
        [const { None }; MAX_ENTITY_BATCHES];
    let mut rest = out;
    let query = world.query_mut::<Q>().into_iter_batched(ENTITY_BATCH);
    for ((piece, batch), &len) in pieces.iter_mut().zip(query).zip(&lens[..batches]) {
        let (here, after) = core::mem::take(&mut rest).split_at_mut(len);
        *piece = Some((batch, here));
        rest = after;
    }
    jobs.for_each_mut(&mut pieces[..batches], |_, piece| {
        if let Some((batch, out)) = piece.take() {
            // `for_each` is hecs's `fold`: one tight loop.
            let mut at = 0;
            batch.for_each(|entity| {
                out[at] = entity;
                at += 1;
            });
        }
    })
}

/// How many entities of kind `K` have a box (one look at each archetype).
pub(crate) fn count<K: Kind, P: Position>(world: &mut World) -> usize {
    count_of::<Boxed<K, ()>>(world) + count_of::<Placed<K, P, ()>>(world)
}

/// Whether some entity of kind `K` with a box has a layer component (one
/// look at each archetype).
fn has_layers<K: Kind, P: Position>(world: &World) -> bool {
    world.archetypes().any(|a| {
        !a.is_empty()
            && (a.satisfies::<Boxed<K, &CollisionLayers>>()
                || a.satisfies::<Placed<K, P, &CollisionLayers>>())
    })
}

/// Whether two boxes have the same bits (no float semantics: `NaN` equals
/// itself, `-0.0` differs from `0.0`).
#[inline(always)]
fn same_bits(a: &Aabb, b: &Aabb) -> bool {
    let bits = |b: &Aabb| {
        [
            b.min.x.to_bits(),
            b.min.y.to_bits(),
            b.min.z.to_bits(),
            b.max.x.to_bits(),
            b.max.y.to_bits(),
            b.max.z.to_bits(),
        ]
    };
    bits(a) == bits(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use proptest::prelude::*;

    /// A label that makes an archetype of its own.
    #[derive(Clone, Copy)]
    struct Tag<const N: usize>;

    /// A world of several archetypes of each kind: boxed and placed
    /// dynamic entities, with and without extra components, one archetype
    /// emptied, and static entities in between that the source skips.
    fn world(sizes: &[usize; 5]) -> World {
        let mut world = World::new();
        let boxed = |i: usize| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.5));
        let placed = |i: usize| (Vec3::new(i as f32, -(i as f32), 2.0), Collider::sphere(0.5));
        for i in 0..sizes[0] {
            world.spawn((boxed(i),));
        }
        for i in 0..sizes[1] {
            world.spawn((boxed(i + 1000), Tag::<1>));
        }
        for i in 0..sizes[2] {
            world.spawn(placed(i));
            world.spawn((boxed(i), Static));
        }
        let gone = world.spawn((boxed(7), Tag::<2>));
        world.despawn(gone).unwrap();
        for i in 0..sizes[3] {
            let (p, c) = placed(i + 3000);
            world.spawn((p, c, Tag::<3>));
        }
        for i in 0..sizes[4] {
            // Both: the box wins, and the entity is a boxed one.
            let (p, c) = placed(i);
            world.spawn((p, c, boxed(i + 5000), Tag::<4>));
        }
        world
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Any run of the source's boxes is the boxes of the gathered
        /// entities, each looked up in the world (its `Aabb`, else its
        /// collider at its position), written whole or handed over in runs;
        /// and the gather's own boxes (which the source writes) are those.
        #[test]
        fn world_boxes_are_the_gathered_entities_boxes(
            sizes in prop::array::uniform5(prop_oneof![0usize..40, 250usize..600]),
            cut in (0.0f64..1.0, 0.0f64..1.0),
        ) {
            let mut world = world(&sizes);
            let mut gathered = Gathered::default();
            gathered.gather::<Dynamic, Vec3>(&mut world, &JobSystem::new(2)).unwrap();
            let expected: Vec<Aabb> = gathered
                .entities
                .iter()
                .map(|&e| match world.get::<&Aabb>(e) {
                    Ok(aabb) => *aabb,
                    Err(_) => {
                        let at = *world.get::<&Vec3>(e).unwrap();
                        world.get::<&Collider>(e).unwrap().aabb_at(at)
                    }
                })
                .collect();
            prop_assert_eq!(&gathered.boxes[..], &expected[..]);
            let source = WorldBoxes::<Dynamic, Vec3>::new(&world, gathered.len());
            prop_assert_eq!(source.len(), sizes.iter().sum::<usize>());
            let n = gathered.len();
            let first = (cut.0 * n as f64) as usize;
            let len = ((cut.1 * (n - first) as f64) as usize).min(n - first);
            let mut out = vec![Aabb::default(); len];
            source.write(first, &mut out);
            prop_assert_eq!(&out[..], &expected[first..first + len]);
            // In runs, each where it belongs, the runs one after another.
            let mut next = first;
            source.write_runs(first..first + len, |start, boxes| {
                assert_eq!(start, next, "runs in order, with no gap");
                assert_eq!(boxes, &expected[start..start + boxes.len()]);
                next += boxes.len();
            });
            prop_assert_eq!(next, first + len);
        }
    }
}
