//! Queries through the plugin: rays, boxes, points, spheres and regions of
//! the caller's own against every entity with a box as of the last
//! successful run, answered with entities, filtered by collision layers
//! and, for rays and regions, by a predicate.

use crate::proxies::proxy_error;
use crate::{BroadPhasePlugin, CollisionLayers, PluginError, Position};
use broadphase_persistent::{Proxy, QueryView};
use broadphase_storage::{Aabb, Ray, RegionTest, Sphere};
use glam::Vec3;
use hecs::Entity;

impl<P: Position> BroadPhasePlugin<P> {
    /// The broad phase's query view, and the plugin's entity table.
    fn view(&mut self) -> Result<(QueryView<'_>, &crate::proxies::EntityProxies), PluginError> {
        let view = self.backend.broad_phase.queries(&self.backend.jobs).map_err(proxy_error)?;
        Ok((view, &self.proxies))
    }

    /// A box, point or sphere query through the view: `ask` fills the
    /// proxies found, and `out` (cleared first) gets the entities of those
    /// whose layers interact with `layers`, in the view's order (entity id).
    fn shape_query(
        &mut self,
        layers: CollisionLayers,
        out: &mut Vec<Entity>,
        ask: impl FnOnce(&QueryView<'_>, &mut Vec<Proxy>) -> Result<(), PluginError>,
    ) -> Result<(), PluginError> {
        out.clear();
        let Self { backend, proxies, query_proxies: found, .. } = self;
        let view = backend.broad_phase.queries(&backend.jobs).map_err(proxy_error)?;
        ask(&view, found)?;
        out.extend(
            found
                .iter()
                .filter(|&&p| layers.interacts_with(&proxies.layers(p)))
                .map(|&p| proxies.live_entity(p)),
        );
        Ok(())
    }

    /// The first entity `ray` hits among those whose layers interact with
    /// `layers` ([`CollisionLayers::interacts_with`];
    /// [`CollisionLayers::ALL`] for every entity), with where the ray
    /// enters its box; ties go to the smaller entity id. Entities are as
    /// of the last successful [`run`](Self::run), static and dynamic.
    ///
    /// # Errors
    /// [`PluginError::Query`] if the ray breaks its contract.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, Collider, CollisionLayers, Static};
    /// use broadphase_storage::Ray;
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let wall = world.spawn((Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0)), Static));
    /// let player = world.spawn((Vec3::ZERO, Collider::sphere(0.5)));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let ray = Ray::new(Vec3::ZERO, Vec3::X, 100.0);
    /// // The player's own box is hit first; leave it out to see the wall.
    /// assert_eq!(plugin.cast_ray(&ray, CollisionLayers::ALL)?, Some((player, 0.0)));
    /// let hit = plugin.cast_ray_where(&ray, CollisionLayers::ALL, |e| e != player)?;
    /// assert_eq!(hit, Some((wall, 5.0)));
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn cast_ray(
        &mut self,
        ray: &Ray,
        layers: CollisionLayers,
    ) -> Result<Option<(Entity, f32)>, PluginError> {
        self.cast_ray_where(ray, layers, |_| true)
    }

    /// [`cast_ray`](Self::cast_ray) over the entities `keep` also accepts
    /// (leave out the shooter).
    ///
    /// # Errors
    /// [`PluginError::Query`] if the ray breaks its contract.
    pub fn cast_ray_where(
        &mut self,
        ray: &Ray,
        layers: CollisionLayers,
        keep: impl Fn(Entity) -> bool,
    ) -> Result<Option<(Entity, f32)>, PluginError> {
        let (view, proxies) = self.view()?;
        let accept =
            |p: Proxy| layers.interacts_with(&proxies.layers(p)) && keep(proxies.live_entity(p));
        let hit = view.cast_ray_where(ray, accept).map_err(PluginError::Query)?;
        Ok(hit.map(|(p, t)| (proxies.live_entity(p), t)))
    }

    /// Every entity `ray` hits among those whose layers interact with
    /// `layers`, with where the ray enters each, into `out` (cleared
    /// first), sorted by `t` then entity id.
    ///
    /// # Errors
    /// [`PluginError::Query`] if the ray breaks its contract; `out` is then
    /// empty.
    pub fn ray_hits(
        &mut self,
        ray: &Ray,
        layers: CollisionLayers,
        out: &mut Vec<(Entity, f32)>,
    ) -> Result<(), PluginError> {
        out.clear();
        let Self { backend, proxies, query_hits: hits, .. } = self;
        let view = backend.broad_phase.queries(&backend.jobs).map_err(proxy_error)?;
        view.ray_hits(ray, hits).map_err(PluginError::Query)?;
        out.extend(
            hits.iter()
                .filter(|&&(p, _)| layers.interacts_with(&proxies.layers(p)))
                .map(|&(p, t)| (proxies.live_entity(p), t)),
        );
        Ok(())
    }

    /// Every entity whose box overlaps `query` (and whose layers interact
    /// with `layers`), into `out` (cleared first), sorted by entity id.
    ///
    /// # Errors
    /// [`PluginError::Input`] if the box breaks the box contract.
    pub fn query_aabb(
        &mut self,
        query: &Aabb,
        layers: CollisionLayers,
        out: &mut Vec<Entity>,
    ) -> Result<(), PluginError> {
        self.shape_query(layers, out, |view, found| {
            view.query_aabb(query, found).map_err(PluginError::Input)
        })
    }

    /// Every entity whose box contains `point` (and whose layers interact
    /// with `layers`), sorted by entity id.
    ///
    /// # Errors
    /// [`PluginError::Query`] if the point is not finite.
    pub fn query_point(
        &mut self,
        point: Vec3,
        layers: CollisionLayers,
        out: &mut Vec<Entity>,
    ) -> Result<(), PluginError> {
        self.shape_query(layers, out, |view, found| {
            view.query_point(point, found).map_err(PluginError::Query)
        })
    }

    /// Every entity whose box `sphere` meets (and whose layers interact
    /// with `layers`): a blast radius, sorted by entity id.
    ///
    /// # Errors
    /// [`PluginError::Query`] if the sphere breaks its contract.
    pub fn query_sphere(
        &mut self,
        sphere: &Sphere,
        layers: CollisionLayers,
        out: &mut Vec<Entity>,
    ) -> Result<(), PluginError> {
        self.shape_query(layers, out, |view, found| {
            view.query_sphere(sphere, found).map_err(PluginError::Query)
        })
    }

    /// Every entity whose box `region` [meets](RegionTest::meets), whose
    /// layers interact with `layers` and that `keep` accepts, into `out`
    /// (cleared first), sorted by entity id: a view frustum
    /// ([`Frustum`](broadphase_storage::Frustum)), a capsule
    /// ([`Capsule`](broadphase_storage::Capsule)), or any [`RegionTest`].
    ///
    /// # Errors
    /// [`PluginError::Query`] if the region breaks its contract or its
    /// bounds break the box contract.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, CollisionLayers, Static};
    /// use broadphase_storage::Frustum;
    /// use glam::{Mat4, Vec3};
    /// let mut world = hecs::World::new();
    /// let ahead = world.spawn((Aabb::new(Vec3::new(-1.0, -1.0, -11.0), Vec3::new(1.0, 1.0, -9.0)), Static));
    /// let hidden = world.spawn((Aabb::new(Vec3::new(-1.0, -1.0, -21.0), Vec3::new(1.0, 1.0, -19.0)), Static));
    /// world.spawn((Aabb::new(Vec3::new(-1.0, -1.0, 9.0), Vec3::new(1.0, 1.0, 11.0)), Static));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let camera = Mat4::perspective_rh(1.0, 1.0, 0.1, 50.0) * Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
    /// let frustum = Frustum::from_view_projection(camera)?;
    /// let mut seen = Vec::new();
    /// plugin.query_with(&frustum, CollisionLayers::ALL, |e| e != hidden, &mut seen)?;
    /// assert_eq!(seen, [ahead]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_with(
        &mut self,
        region: &impl RegionTest,
        layers: CollisionLayers,
        keep: impl Fn(Entity) -> bool,
        out: &mut Vec<Entity>,
    ) -> Result<(), PluginError> {
        self.shape_query(layers, out, |view, found| {
            view.query_with(region, found).map_err(PluginError::Query)
        })?;
        out.retain(|&entity| keep(entity));
        Ok(())
    }
}
