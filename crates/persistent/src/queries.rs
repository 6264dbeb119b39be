//! Queries on the persistent broad phase: rays, boxes, points and spheres
//! against every live proxy's box as it stands.
//!
//! The index holds enlarged boxes in two tiers; an entry is current if its
//! proxy was not re-indexed since its tier was built. A query walks the
//! tiers' grids with the proxies' true boxes as the exact test, keeping
//! current entries of proxies with no call pending, and tests the others
//! (stale entries, proxies set, inserted or re-kinded since the last
//! update) one by one. Each live proxy is answered for exactly once.

use super::broad_phase::PersistentBroadPhase;
use super::error::ProxyError;
use super::slots::Proxy;
use broadphase_jobs::JobSystem;
use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{
    Aabb, InputError, QueryError, Ray, RegionTest, Sphere, planes_hold, validate_point,
};
use glam::{DVec4, Vec3};

/// A read-only view of a [`PersistentBroadPhase`] for queries, from
/// [`PersistentBroadPhase::queries`]. Answers for every live proxy's box
/// as it stands, calls since the last update included; handles come back
/// in the structure's order (slot, then generation). A first-hit ray
/// allocates nothing; all-hits and box, point and sphere queries use a
/// short scratch list of their own. Batches of each
/// ([`cast_rays`](Self::cast_rays), [`query_aabbs`](Self::query_aabbs), …)
/// run on all threads of a job system, their scratch kept in the
/// [`BatchAnswers`](crate::BatchAnswers) they fill.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::{Aabb, Ray};
/// use glam::Vec3;
/// let jobs = JobSystem::new(1);
/// let mut world = PersistentBroadPhase::default();
/// let wall = world.insert(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0)), ProxyKind::Static)?;
/// let shooter = world.insert(Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
/// let view = world.queries(&jobs)?;
/// let ray = Ray::new(Vec3::ZERO, Vec3::X, f32::INFINITY);
/// assert_eq!(view.cast_ray(&ray)?, Some((shooter, 0.0)));
/// assert_eq!(view.cast_ray_where(&ray, |p| p != shooter)?, Some((wall, 5.0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct QueryView<'a> {
    world: &'a PersistentBroadPhase,
    /// Live slots a grid cannot answer for: tested one by one.
    loose: &'a [u32],
}

impl PersistentBroadPhase {
    /// Readies the index for queries and returns a view that answers them.
    /// A full update leaves no index: the first call after one builds it
    /// (the cost of a rebuild of the enlarged boxes' grids); after
    /// incremental updates the kept index is used as it is.
    ///
    /// # Errors
    /// [`ProxyError::Partition`] if building the index failed (a job
    /// panicked, a list could not grow).
    pub fn queries(&mut self, jobs: &JobSystem) -> Result<QueryView<'_>, ProxyError> {
        self.index.ensure_built(jobs, &self.slots)?;
        self.query_loose.reset();
        let slots = &self.slots;
        self.index.stale_live(slots, |slot| slots.queued.get(slot as usize), &mut self.query_loose);
        // Queued since the last update: set, inserted or re-kinded.
        self.query_loose.extend(
            self.queue.iter().copied().filter(|&slot| slots.state[slot as usize].is_live()),
        );
        self.query_loose.sort_unstable();
        self.query_loose.dedup();
        Ok(QueryView { world: self, loose: &self.query_loose })
    }
}

/// The grids' answers to one query before they become proxies: kept in
/// the broad phase so that single queries on a warm view allocate nothing.
#[derive(Debug, Default)]
pub(crate) struct QueryScratch {
    ids: Vec<u32>,
    hits: Vec<(u32, f32)>,
}

impl QueryView<'_> {
    /// Runs `query` with the broad phase's kept scratch, or, while another
    /// thread's query holds it, with a fresh one (a view is shared across
    /// threads; only then does a single query allocate).
    fn with_scratch<R>(&self, query: impl FnOnce(&mut QueryScratch) -> R) -> R {
        match self.world.query_scratch.try_lock() {
            Some(mut kept) => query(&mut kept),
            None => query(&mut QueryScratch::default()),
        }
    }

    /// The proxy of a slot the index answered for, if it is live and its
    /// entry there is current (the proxy's box is inside it).
    #[inline]
    fn indexed(&self, slot: u32, current: &dyn Fn(usize) -> bool) -> Option<Proxy> {
        let slots = &self.world.slots;
        let s = slot as usize;
        (slots.state[s].is_live() && current(s) && !slots.queued.get(s)).then(|| slots.handle(slot))
    }

    /// The first proxy `ray` hits ([`Ray::entry`] on its box), ties to the
    /// smaller handle.
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract.
    pub fn cast_ray(&self, ray: &Ray) -> Result<Option<(Proxy, f32)>, QueryError> {
        self.cast_ray_where(ray, |_| true)
    }

    /// [`cast_ray`](Self::cast_ray) over the proxies `keep` accepts (leave
    /// out the shooter, a layer, a trigger).
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract.
    pub fn cast_ray_where(
        &self,
        ray: &Ray,
        keep: impl Fn(Proxy) -> bool,
    ) -> Result<Option<(Proxy, f32)>, QueryError> {
        ray.validate()?;
        Ok(self.first_hit(ray, keep))
    }

    /// [`cast_ray_where`](Self::cast_ray_where) for a ray already checked.
    pub(crate) fn first_hit(
        &self,
        ray: &Ray,
        keep: impl Fn(Proxy) -> bool,
    ) -> Option<(Proxy, f32)> {
        let boxes = &self.world.slots.boxes;
        let mut best: Option<(f32, Proxy)> = None;
        let mut offer = |t: f32, proxy: Proxy| {
            if best.is_none_or(|best| (t, proxy) < best) {
                best = Some((t, proxy));
            }
        };
        self.world.index.for_each_grid(|grid, slot_of, current| {
            let hit = grid.cast_ray_where(ray, |id| {
                let slot = slot_of[id as usize];
                let proxy = self.indexed(slot, current).filter(|&p| keep(p))?;
                let t = ray.entry(&boxes[slot as usize])?;
                // The grid's own tie rule is by its index: offer every hit
                // that could tie, and let the grid prune by its best.
                offer(t, proxy);
                Some(t)
            });
            debug_assert!(hit.is_ok(), "the ray was checked");
        });
        for &slot in self.loose {
            let proxy = self.world.slots.handle(slot);
            if keep(proxy)
                && let Some(t) = ray.entry(&boxes[slot as usize])
            {
                offer(t, proxy);
            }
        }
        best.map(|(t, proxy)| (proxy, t))
    }

    /// Every proxy `ray` hits, as `(proxy, entry t)`, into `out` (cleared
    /// first), sorted by `t` then handle, each once.
    ///
    /// # Errors
    /// [`QueryError`] if the ray breaks its contract; `out` is then empty.
    pub fn ray_hits(&self, ray: &Ray, out: &mut Vec<(Proxy, f32)>) -> Result<(), QueryError> {
        out.clear();
        ray.validate()?;
        self.with_scratch(|scratch| self.append_ray_hits(ray, &mut scratch.hits, out));
        Ok(())
    }

    /// Appends [`ray_hits`](Self::ray_hits) of a ray already checked to
    /// `out`, in its order; `grid_hits` is scratch for the grids' answers.
    pub(crate) fn append_ray_hits(
        &self,
        ray: &Ray,
        grid_hits: &mut Vec<(u32, f32)>,
        out: &mut Vec<(Proxy, f32)>,
    ) {
        let start = out.len();
        let boxes = &self.world.slots.boxes;
        self.world.index.for_each_grid(|grid, slot_of, current| {
            let found = grid.ray_hits_where(
                ray,
                |id| {
                    let slot = slot_of[id as usize];
                    self.indexed(slot, current)?;
                    ray.entry(&boxes[slot as usize])
                },
                grid_hits,
            );
            debug_assert!(found.is_ok(), "the ray was checked");
            out.extend(
                grid_hits.iter().map(|&(id, t)| (self.world.slots.handle(slot_of[id as usize]), t)),
            );
        });
        for &slot in self.loose {
            if let Some(t) = ray.entry(&boxes[slot as usize]) {
                out.push((self.world.slots.handle(slot), t));
            }
        }
        out[start..].sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    }

    /// Every proxy whose box overlaps `query`, into `out` (cleared first),
    /// sorted by handle.
    ///
    /// # Errors
    /// [`InputError`] (index 0) if the query box breaks the box contract;
    /// `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(1);
    /// let mut world = PersistentBroadPhase::default();
    /// let wall = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Static)?;
    /// world.update(&jobs)?;
    /// let view = world.queries(&jobs)?;
    /// let mut found = Vec::new();
    /// view.query_aabb(&Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)), &mut found)?;
    /// assert_eq!(found, [wall]);
    /// // An inverted box is an error, and leaves `found` empty.
    /// assert!(view.query_aabb(&Aabb::new(Vec3::ONE, Vec3::ZERO), &mut found).is_err());
    /// assert!(found.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_aabb(&self, query: &Aabb, out: &mut Vec<Proxy>) -> Result<(), InputError> {
        out.clear();
        query.validate(0)?;
        self.with_scratch(|scratch| self.append_aabb(query, &mut scratch.ids, out));
        Ok(())
    }

    /// Every proxy whose box contains `point` (faces included), sorted by
    /// handle.
    ///
    /// # Errors
    /// [`QueryError`] if the point is not finite; `out` is then empty.
    pub fn query_point(&self, point: Vec3, out: &mut Vec<Proxy>) -> Result<(), QueryError> {
        out.clear();
        validate_point(point)?;
        let point = Aabb::new(point, point);
        self.with_scratch(|scratch| self.append_aabb(&point, &mut scratch.ids, out));
        Ok(())
    }

    /// Every proxy whose box `sphere` meets ([`Sphere::overlaps`]), sorted
    /// by handle.
    ///
    /// # Errors
    /// [`QueryError`] if the sphere breaks its contract; `out` is then
    /// empty.
    pub fn query_sphere(&self, sphere: &Sphere, out: &mut Vec<Proxy>) -> Result<(), QueryError> {
        out.clear();
        sphere.validate()?;
        self.with_scratch(|scratch| self.append_sphere(sphere, &mut scratch.ids, out));
        Ok(())
    }

    /// Every proxy whose box `region` [meets](RegionTest::meets): a shape
    /// of the caller's own ([`Frustum`](broadphase_storage::Frustum),
    /// [`Capsule`](broadphase_storage::Capsule), any [`RegionTest`]),
    /// sorted by handle. The index's grids are walked with the region's
    /// bounds and cell test ([`AdaptiveGrid::query_with`]); each proxy's
    /// own box takes the exact test.
    ///
    /// # Errors
    /// [`QueryError`] if the region breaks its contract or its bounds
    /// break the box contract; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, Capsule};
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(1);
    /// let mut world = PersistentBroadPhase::default();
    /// let near = world.insert(Aabb::new(Vec3::new(0.0, 1.0, 0.0), Vec3::splat(2.0)), ProxyKind::Static)?;
    /// world.insert(Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// let view = world.queries(&jobs)?;
    /// let mut found = Vec::new();
    /// view.query_with(&Capsule::new(Vec3::ZERO, Vec3::X, 1.0), &mut found)?;
    /// assert_eq!(found, [near]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_with(
        &self,
        region: &impl RegionTest,
        out: &mut Vec<Proxy>,
    ) -> Result<(), QueryError> {
        out.clear();
        region.validate()?;
        let bounds = region.bounds();
        bounds.validate(0)?;
        self.with_scratch(|scratch| self.append_region(region, bounds, &mut scratch.ids, out));
        Ok(())
    }

    /// Appends [`query_aabb`](Self::query_aabb) of a box already checked
    /// to `out`; `ids` is scratch for the grids' answers.
    pub(crate) fn append_aabb(&self, query: &Aabb, ids: &mut Vec<u32>, out: &mut Vec<Proxy>) {
        self.collect(aabb_candidates(query), |b| b.overlaps(query), ids, out);
    }

    /// Appends [`query_sphere`](Self::query_sphere) of a sphere already
    /// checked to `out`; `ids` is scratch for the grids' answers.
    pub(crate) fn append_sphere(&self, sphere: &Sphere, ids: &mut Vec<u32>, out: &mut Vec<Proxy>) {
        // `Sphere::overlaps`, with the bounds made once, not per candidate.
        let bounds = sphere.bounds();
        self.collect(
            aabb_candidates(&bounds),
            |b| bounds.overlaps(b) && sphere.reaches(b),
            ids,
            out,
        );
    }

    /// Appends [`query_with`](Self::query_with) of a region already
    /// checked to `out`, given its `bounds` (checked too); `ids` is scratch
    /// for the grids' answers.
    pub(crate) fn append_region(
        &self,
        region: &impl RegionTest,
        bounds: Aabb,
        ids: &mut Vec<u32>,
        out: &mut Vec<Proxy>,
    ) {
        let enlarged = Enlarged { region, bounds };
        let candidates = |grid: &AdaptiveGrid, ids: &mut Vec<u32>| {
            grid.query_with(&enlarged, ids).expect("a checked region is valid");
        };
        self.collect(candidates, |b| region.meets(b), ids, out);
    }

    /// Appends to `out`, sorted by handle, every proxy whose box passes
    /// `hit`, among the index's candidates (which `candidates` finds in
    /// each grid, into `ids`) and the loose proxies.
    fn collect(
        &self,
        mut candidates: impl FnMut(&AdaptiveGrid, &mut Vec<u32>),
        hit: impl Fn(&Aabb) -> bool,
        ids: &mut Vec<u32>,
        out: &mut Vec<Proxy>,
    ) {
        let start = out.len();
        let boxes = &self.world.slots.boxes;
        self.world.index.for_each_grid(|grid, slot_of, current| {
            candidates(grid, ids);
            for &id in ids.iter() {
                let slot = slot_of[id as usize];
                if let Some(proxy) = self.indexed(slot, current)
                    && hit(&boxes[slot as usize])
                {
                    out.push(proxy);
                }
            }
        });
        for &slot in self.loose {
            if hit(&boxes[slot as usize]) {
                out.push(self.world.slots.handle(slot));
            }
        }
        out[start..].sort_unstable();
    }
}

/// The index's candidates for a box: its grids' box query.
fn aabb_candidates(query: &Aabb) -> impl FnMut(&AdaptiveGrid, &mut Vec<u32>) + '_ {
    move |grid, ids| grid.query_aabb(query, ids).expect("a checked query box is valid")
}

/// A region as the index's grids see it: they hold enlarged boxes, each
/// around a proxy's own. An enlarged box holds every point its proxy's box
/// shares with the region, so the region's cell test still holds; the
/// exact test waits for the proxy's own box.
struct Enlarged<'a, R> {
    region: &'a R,
    bounds: Aabb,
}

impl<R: RegionTest> RegionTest for Enlarged<'_, R> {
    #[inline]
    fn bounds(&self) -> Aabb {
        self.bounds
    }

    #[inline]
    fn may_meet(&self, cell: &Aabb) -> bool {
        self.region.may_meet(cell)
    }

    /// The region's bounds and, where it gives them, its planes, on an
    /// enlarged box: a box that meets them has an enlarged box that does
    /// too, so this keeps every candidate, and a region of planes takes
    /// the kernel's walk that decides most boxes from their quantized
    /// boxes.
    #[inline]
    fn meets(&self, aabb: &Aabb) -> bool {
        aabb.overlaps(&self.bounds) && self.plane_test().is_none_or(|p| planes_hold(p, aabb))
    }

    #[inline]
    fn plane_test(&self) -> Option<&[DVec4]> {
        self.region.plane_test()
    }
}
