//! Many queries through the plugin in one call, on the plugin's job
//! system: the persistent broad phase's batches
//! ([`QueryView::cast_rays`] and the others), each hit filtered by
//! collision layers (and, for rays and regions, a predicate) and turned
//! into its entity inside the jobs. Answers come back in input order, each
//! exactly what the single query gives.

use crate::proxies::{EntityProxies, proxy_error};
use crate::{BroadPhasePlugin, CollisionLayers, PluginError, Position};
use broadphase_jobs::JobSystem;
use broadphase_partition::BatchError;
use broadphase_persistent::{BatchAnswers, Proxy, QueryView};
use broadphase_storage::{Aabb, Ray, RegionTest, Sphere};
use glam::Vec3;
use hecs::Entity;

impl<P: Position> BroadPhasePlugin<P> {
    /// Runs `ask` on the broad phase's query view, the plugin's job
    /// system and its entity table; a refused batch becomes
    /// [`PluginError::Batch`].
    fn batch(
        &mut self,
        ask: impl FnOnce(&QueryView<'_>, &JobSystem, &EntityProxies) -> Result<(), BatchError>,
    ) -> Result<(), PluginError> {
        let backend = &mut self.backend;
        let view = backend.broad_phase.queries(&backend.jobs).map_err(proxy_error)?;
        ask(&view, &backend.jobs, &self.proxies).map_err(PluginError::Batch)
    }

    /// Casts every ray of `rays` on the plugin's threads: `out[i]` (the
    /// vector is cleared first) becomes ray `i`'s first hit among the
    /// entities whose layers interact with `layers`, as
    /// [`cast_ray`](Self::cast_ray) gives it.
    ///
    /// # Errors
    /// [`PluginError::Batch`] naming the first ray that breaks its
    /// contract ([`BatchError::Query`]); `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, CollisionLayers, Static};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let wall = world.spawn((Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0)), Static));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let rays = [Ray::new(Vec3::ZERO, Vec3::X, 100.0), Ray::new(Vec3::ZERO, -Vec3::X, 100.0)];
    /// let mut hits = Vec::new();
    /// plugin.cast_rays(&rays, CollisionLayers::ALL, &mut hits)?;
    /// assert_eq!(hits, [Some((wall, 5.0)), None]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn cast_rays(
        &mut self,
        rays: &[Ray],
        layers: CollisionLayers,
        out: &mut Vec<Option<(Entity, f32)>>,
    ) -> Result<(), PluginError> {
        self.cast_rays_where(rays, layers, |_, _| true, out)
    }

    /// [`cast_rays`](Self::cast_rays) over the entities `keep(i, entity)`
    /// also accepts for ray `i`: [`cast_ray_where`](Self::cast_ray_where)
    /// for each ray (leave out each ray's own shooter).
    ///
    /// # Errors
    /// As [`cast_rays`](Self::cast_rays).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{BroadPhasePlugin, Collider, CollisionLayers};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let a = world.spawn((Vec3::ZERO, Collider::sphere(0.5)));
    /// let b = world.spawn((Vec3::new(5.0, 0.0, 0.0), Collider::sphere(0.5)));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// // Each shoots at the other from its own centre.
    /// let rays = [Ray::new(Vec3::ZERO, Vec3::X, 10.0), Ray::new(Vec3::new(5.0, 0.0, 0.0), -Vec3::X, 10.0)];
    /// let shooters = [a, b];
    /// let mut hits = Vec::new();
    /// plugin.cast_rays_where(&rays, CollisionLayers::ALL, |i, e| e != shooters[i], &mut hits)?;
    /// assert_eq!(hits, [Some((b, 4.5)), Some((a, 4.5))]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn cast_rays_where(
        &mut self,
        rays: &[Ray],
        layers: CollisionLayers,
        keep: impl Fn(usize, Entity) -> bool + Sync,
        out: &mut Vec<Option<(Entity, f32)>>,
    ) -> Result<(), PluginError> {
        out.clear();
        self.batch(|view, jobs, proxies| {
            view.cast_rays_map(jobs, rays, entity_of(proxies, layers, &keep), out)
        })
    }

    /// Every entity each ray of `rays` hits among those whose layers
    /// interact with `layers`, on the plugin's threads: the answer of ray
    /// `i` is [`ray_hits`](Self::ray_hits)'s (sorted by `t` then entity
    /// id), with where the ray enters each box.
    ///
    /// # Errors
    /// [`PluginError::Batch`] naming the first ray that breaks its
    /// contract ([`BatchError::Query`]); `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BatchAnswers, BroadPhasePlugin, CollisionLayers, Static};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let near = world.spawn((Aabb::new(Vec3::new(2.0, -1.0, -1.0), Vec3::new(3.0, 1.0, 1.0)), Static));
    /// let far = world.spawn((Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0)), Static));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let mut hits = BatchAnswers::default();
    /// plugin.rays_hits(&[Ray::new(Vec3::ZERO, Vec3::X, 10.0)], CollisionLayers::ALL, &mut hits)?;
    /// assert_eq!(hits.hits(0), [(near, 2.0), (far, 5.0)]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn rays_hits(
        &mut self,
        rays: &[Ray],
        layers: CollisionLayers,
        out: &mut BatchAnswers<(Entity, f32)>,
    ) -> Result<(), PluginError> {
        out.clear();
        self.batch(|view, jobs, proxies| {
            view.rays_hits_map(jobs, rays, entity_of(proxies, layers, |_, _| true), out)
        })
    }

    /// Every entity whose box overlaps each query box of `boxes` (and
    /// whose layers interact with `layers`), on the plugin's threads: the
    /// answer of box `i` is [`query_aabb`](Self::query_aabb)'s.
    ///
    /// # Errors
    /// [`PluginError::Batch`] naming the first box that breaks the box
    /// contract ([`BatchError::Input`]); `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BatchAnswers, BatchError, BroadPhasePlugin, CollisionLayers, PluginError, Static};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let wall = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), Static));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let boxes = [Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)), Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0))];
    /// let mut found = BatchAnswers::default();
    /// plugin.query_aabbs(&boxes, CollisionLayers::ALL, &mut found)?;
    /// assert_eq!((found.hits(0), found.hits(1)), (&[wall][..], &[][..]));
    /// let bad = [boxes[0], Aabb::new(Vec3::ONE, Vec3::ZERO)];
    /// let err = plugin.query_aabbs(&bad, CollisionLayers::ALL, &mut found).unwrap_err();
    /// assert!(matches!(err, PluginError::Batch(BatchError::Input { index: 1, .. })));
    /// assert!(found.is_empty());
    /// # Ok::<(), PluginError>(())
    /// ```
    pub fn query_aabbs(
        &mut self,
        boxes: &[Aabb],
        layers: CollisionLayers,
        out: &mut BatchAnswers<Entity>,
    ) -> Result<(), PluginError> {
        out.clear();
        self.batch(|view, jobs, proxies| {
            view.query_aabbs_map(jobs, boxes, entity_of(proxies, layers, |_, _| true), out)
        })
    }

    /// Every entity whose box contains each point of `points` (and whose
    /// layers interact with `layers`), on the plugin's threads: the answer
    /// of point `i` is [`query_point`](Self::query_point)'s.
    ///
    /// # Errors
    /// [`PluginError::Batch`] naming the first point that is not finite
    /// ([`BatchError::Query`]); `out` is then empty.
    pub fn query_points(
        &mut self,
        points: &[Vec3],
        layers: CollisionLayers,
        out: &mut BatchAnswers<Entity>,
    ) -> Result<(), PluginError> {
        out.clear();
        self.batch(|view, jobs, proxies| {
            view.query_points_map(jobs, points, entity_of(proxies, layers, |_, _| true), out)
        })
    }

    /// Every entity whose box each sphere of `spheres` meets (and whose
    /// layers interact with `layers`), on the plugin's threads: the answer
    /// of sphere `i` is [`query_sphere`](Self::query_sphere)'s.
    ///
    /// # Errors
    /// [`PluginError::Batch`] naming the first sphere that breaks its
    /// contract ([`BatchError::Query`]); `out` is then empty.
    pub fn query_spheres(
        &mut self,
        spheres: &[Sphere],
        layers: CollisionLayers,
        out: &mut BatchAnswers<Entity>,
    ) -> Result<(), PluginError> {
        out.clear();
        self.batch(|view, jobs, proxies| {
            view.query_spheres_map(jobs, spheres, entity_of(proxies, layers, |_, _| true), out)
        })
    }

    /// Every entity whose box each region of `regions`
    /// [meets](RegionTest::meets), whose layers interact with `layers` and
    /// that `keep(i, entity)` accepts for region `i`, on the plugin's
    /// threads: the answer of region `i` is
    /// [`query_with`](Self::query_with)'s — the frustums of several views.
    ///
    /// # Errors
    /// [`PluginError::Batch`] naming the first region refused (its
    /// [`validate`](RegionTest::validate), or bounds that break the box
    /// contract: [`BatchError::Query`]); `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BatchAnswers, BroadPhasePlugin, CollisionLayers, Static};
    /// use broadphase_storage::Capsule;
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let near = world.spawn((Aabb::new(Vec3::new(0.0, 1.0, 0.0), Vec3::splat(2.0)), Static));
    /// let far = world.spawn((Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)), Static));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let capsules = [Capsule::new(Vec3::ZERO, Vec3::X, 1.0), Capsule::new(Vec3::ZERO, Vec3::splat(7.0), 0.5)];
    /// let mut seen = BatchAnswers::default();
    /// // The second capsule's owner stands in `near`: leave it out for that one.
    /// plugin.query_regions(&capsules, CollisionLayers::ALL, |i, e| i == 0 || e != near, &mut seen)?;
    /// assert_eq!((seen.hits(0), seen.hits(1)), (&[near][..], &[far][..]));
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn query_regions<R: RegionTest + Sync>(
        &mut self,
        regions: &[R],
        layers: CollisionLayers,
        keep: impl Fn(usize, Entity) -> bool + Sync,
        out: &mut BatchAnswers<Entity>,
    ) -> Result<(), PluginError> {
        out.clear();
        self.batch(|view, jobs, proxies| {
            view.query_regions_map(jobs, regions, entity_of(proxies, layers, &keep), out)
        })
    }
}

/// The map a batch hands the view: a proxy of query `i` becomes its
/// entity if its layers interact with `layers` and `keep(i, entity)`
/// accepts it, the filter the single queries apply.
fn entity_of<'a>(
    proxies: &'a EntityProxies,
    layers: CollisionLayers,
    keep: impl Fn(usize, Entity) -> bool + Sync + 'a,
) -> impl Fn(usize, Proxy) -> Option<Entity> + Sync + 'a {
    move |index, proxy| {
        let entity = proxies.live_entity(proxy);
        (layers.interacts_with(&proxies.layers(proxy)) && keep(index, entity)).then_some(entity)
    }
}
