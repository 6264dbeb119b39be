//! Many queries on the persistent broad phase in one call, split over a
//! job system: every thread asks the same read-only view, and the answers
//! come back in input order, each exactly what the single query gives.
//!
//! Every query of a batch is checked before any is answered; the first
//! that breaks its contract refuses the batch with a [`BatchError`]
//! naming its index, and the output is left empty.

use super::batch::{BatchAnswers, CHUNK, Scratch};
use super::queries::QueryView;
use super::slots::Proxy;
use broadphase_jobs::JobSystem;
use broadphase_partition::BatchError;
use broadphase_storage::{Aabb, Ray, RegionTest, Sphere, validate_point};
use glam::Vec3;

/// A ray batch's check: the ray contract.
fn check_ray(ray: &Ray, index: usize) -> Result<(), BatchError> {
    ray.validate().map_err(|error| BatchError::Query { index, error })
}

/// A box batch's check: the box contract, as [`BatchError::Input`].
fn check_aabb(query: &Aabb, index: usize) -> Result<(), BatchError> {
    query.validate(0).map_err(|error| BatchError::Input { index, error })
}

/// A point batch's check: finite coordinates.
fn check_point(point: &Vec3, index: usize) -> Result<(), BatchError> {
    validate_point(*point).map_err(|error| BatchError::Query { index, error })
}

/// A sphere batch's check: the sphere contract.
fn check_sphere(sphere: &Sphere, index: usize) -> Result<(), BatchError> {
    sphere.validate().map_err(|error| BatchError::Query { index, error })
}

/// A region batch's check: the region's own, then its bounds' box
/// contract, as [`QueryView::query_with`] checks them.
fn check_region(region: &impl RegionTest, index: usize) -> Result<(), BatchError> {
    region
        .validate()
        .and_then(|()| Ok(region.bounds().validate(0)?))
        .map_err(|error| BatchError::Query { index, error })
}

impl QueryView<'_> {
    /// Casts every ray of `rays` on the threads of `jobs`: `out[i]` (the
    /// vector is cleared first) becomes ray `i`'s first hit, as
    /// [`cast_ray`](Self::cast_ray) gives it.
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first ray that breaks its
    /// contract, or [`BatchError::Job`] if a job panicked; `out` is then
    /// empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, Ray};
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let wall = world.insert(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0)), ProxyKind::Static)?;
    /// world.update(&jobs)?;
    /// let rays = [Ray::new(Vec3::ZERO, Vec3::X, 10.0), Ray::new(Vec3::ZERO, Vec3::Y, 10.0)];
    /// let mut hits = Vec::new();
    /// world.queries(&jobs)?.cast_rays(&jobs, &rays, &mut hits)?;
    /// assert_eq!(hits, [Some((wall, 5.0)), None]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_rays(
        &self,
        jobs: &JobSystem,
        rays: &[Ray],
        out: &mut Vec<Option<(Proxy, f32)>>,
    ) -> Result<(), BatchError> {
        self.cast_rays_map(jobs, rays, |_, proxy| Some(proxy), out)
    }

    /// [`cast_rays`](Self::cast_rays) over the proxies `keep(i, proxy)`
    /// accepts for ray `i`: [`cast_ray_where`](Self::cast_ray_where) for
    /// each ray (leave out each ray's own shooter).
    ///
    /// # Errors
    /// As [`cast_rays`](Self::cast_rays).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, Ray};
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let a = world.insert(Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)), ProxyKind::Dynamic)?;
    /// let b = world.insert(Aabb::new(Vec3::new(4.5, -0.5, -0.5), Vec3::new(5.5, 0.5, 0.5)), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// // Each shoots at the other from its own centre.
    /// let rays = [Ray::new(Vec3::ZERO, Vec3::X, 10.0), Ray::new(Vec3::new(5.0, 0.0, 0.0), -Vec3::X, 10.0)];
    /// let shooters = [a, b];
    /// let mut hits = Vec::new();
    /// world.queries(&jobs)?.cast_rays_where(&jobs, &rays, |i, p| p != shooters[i], &mut hits)?;
    /// assert_eq!(hits, [Some((b, 4.5)), Some((a, 4.5))]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_rays_where(
        &self,
        jobs: &JobSystem,
        rays: &[Ray],
        keep: impl Fn(usize, Proxy) -> bool + Sync,
        out: &mut Vec<Option<(Proxy, f32)>>,
    ) -> Result<(), BatchError> {
        self.cast_rays_map(jobs, rays, |i, proxy| keep(i, proxy).then_some(proxy), out)
    }

    /// [`cast_rays`](Self::cast_rays) over the proxies `map(i, proxy)`
    /// takes for ray `i` (returns `Some`), each hit as `map` makes it: the
    /// filter and the translation in one (a handle to a game object). The
    /// ray's first hit among the proxies `map` takes is mapped again for
    /// the answer, so `map` must give a proxy the same answer each time.
    ///
    /// # Errors
    /// As [`cast_rays`](Self::cast_rays).
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
    /// let names = ["crate", "wall"];
    /// for x in [2.0, 5.0] {
    ///     world.insert(Aabb::new(Vec3::new(x, -1.0, -1.0), Vec3::new(x + 1.0, 1.0, 1.0)), ProxyKind::Static)?;
    /// }
    /// world.update(&jobs)?;
    /// let rays = [Ray::new(Vec3::ZERO, Vec3::X, 10.0)];
    /// let view = world.queries(&jobs)?;
    /// let mut named = Vec::new();
    /// view.cast_rays_map(&jobs, &rays, |_, p| Some(names[p.index() as usize]), &mut named)?;
    /// assert_eq!(named, [Some(("crate", 2.0))]);
    /// // Past the crate: a `None` leaves a proxy out.
    /// let mut past = Vec::new();
    /// view.cast_rays_map(&jobs, &rays, |_, p| (p.index() != 0).then_some(p.index()), &mut past)?;
    /// assert_eq!(past, [Some((1, 5.0))]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_rays_map<T: Send>(
        &self,
        jobs: &JobSystem,
        rays: &[Ray],
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut Vec<Option<(T, f32)>>,
    ) -> Result<(), BatchError> {
        out.clear();
        for (index, ray) in rays.iter().enumerate() {
            check_ray(ray, index)?;
        }
        out.resize_with(rays.len(), || None);
        let cast = jobs.for_each_chunk_mut(out, CHUNK, |range, hits| {
            crate::profile::zone!("persistent: batch rays");
            for ((index, ray), hit) in range.clone().zip(&rays[range]).zip(hits) {
                *hit = self
                    .first_hit(ray, |proxy| map(index, proxy).is_some())
                    .and_then(|(proxy, t)| Some((map(index, proxy)?, t)));
            }
        });
        if let Err(e) = cast {
            out.clear();
            return Err(e.into());
        }
        Ok(())
    }

    /// Every proxy each ray of `rays` hits, on the threads of `jobs`: the
    /// answer of ray `i` is [`ray_hits`](Self::ray_hits)'s (sorted by `t`
    /// then handle).
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first ray that breaks its
    /// contract, or [`BatchError::Job`]; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{BatchAnswers, PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, Ray};
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let near = world.insert(Aabb::new(Vec3::new(2.0, -1.0, -1.0), Vec3::new(3.0, 1.0, 1.0)), ProxyKind::Static)?;
    /// let far = world.insert(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0)), ProxyKind::Static)?;
    /// world.update(&jobs)?;
    /// let rays = [Ray::new(Vec3::ZERO, Vec3::X, 10.0), Ray::new(Vec3::new(10.0, 0.0, 0.0), -Vec3::X, 6.0)];
    /// let mut hits = BatchAnswers::default();
    /// world.queries(&jobs)?.rays_hits(&jobs, &rays, &mut hits)?;
    /// assert_eq!(hits.hits(0), [(near, 2.0), (far, 5.0)]);
    /// assert_eq!(hits.hits(1), [(far, 4.0)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rays_hits(
        &self,
        jobs: &JobSystem,
        rays: &[Ray],
        out: &mut BatchAnswers<(Proxy, f32)>,
    ) -> Result<(), BatchError> {
        self.rays_hits_map(jobs, rays, |_, proxy| Some(proxy), out)
    }

    /// [`rays_hits`](Self::rays_hits) with each hit of ray `i` through
    /// `map(i, proxy)`: those it maps to `None` are left out, the others
    /// keep their place and their `t`.
    ///
    /// # Errors
    /// As [`rays_hits`](Self::rays_hits).
    pub fn rays_hits_map<T: Send>(
        &self,
        jobs: &JobSystem,
        rays: &[Ray],
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut BatchAnswers<(T, f32)>,
    ) -> Result<(), BatchError> {
        out.run(jobs, rays, check_ray, |index, ray, scratch, items| {
            let Scratch { grid_hits, ray_hits, .. } = scratch;
            ray_hits.clear();
            self.append_ray_hits(ray, grid_hits, ray_hits);
            items.extend(ray_hits.iter().filter_map(|&(p, t)| Some((map(index, p)?, t))));
        })
    }

    /// Every proxy whose box overlaps each query box of `boxes`, on the
    /// threads of `jobs`: the answer of box `i` is
    /// [`query_aabb`](Self::query_aabb)'s (sorted by handle).
    ///
    /// # Errors
    /// [`BatchError::Input`] naming the first box that breaks the box
    /// contract, or [`BatchError::Job`]; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_partition::BatchError;
    /// use broadphase_persistent::{BatchAnswers, PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let wall = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Static)?;
    /// world.update(&jobs)?;
    /// let view = world.queries(&jobs)?;
    /// let mut found = BatchAnswers::default();
    /// let boxes = [Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)), Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0))];
    /// view.query_aabbs(&jobs, &boxes, &mut found)?;
    /// assert_eq!((found.hits(0), found.hits(1)), (&[wall][..], &[][..]));
    /// // An inverted box refuses the batch, names its index, and leaves `found` empty.
    /// let bad = [boxes[0], Aabb::new(Vec3::ONE, Vec3::ZERO)];
    /// let err = view.query_aabbs(&jobs, &bad, &mut found).unwrap_err();
    /// assert!(matches!(err, BatchError::Input { index: 1, .. }));
    /// assert!(found.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_aabbs(
        &self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut BatchAnswers<Proxy>,
    ) -> Result<(), BatchError> {
        self.query_aabbs_map(jobs, boxes, |_, proxy| Some(proxy), out)
    }

    /// [`query_aabbs`](Self::query_aabbs) with each hit of box `i` through
    /// `map(i, proxy)`: those it maps to `None` are left out.
    ///
    /// # Errors
    /// As [`query_aabbs`](Self::query_aabbs).
    pub fn query_aabbs_map<T: Send>(
        &self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut BatchAnswers<T>,
    ) -> Result<(), BatchError> {
        self.shapes(
            jobs,
            boxes,
            check_aabb,
            |q, ids, found| self.append_aabb(q, ids, found),
            map,
            out,
        )
    }

    /// Every proxy whose box contains each point of `points` (faces
    /// included), on the threads of `jobs`: the answer of point `i` is
    /// [`query_point`](Self::query_point)'s (sorted by handle). See
    /// [`BatchAnswers`] for an example.
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first point that is not finite,
    /// or [`BatchError::Job`]; `out` is then empty.
    pub fn query_points(
        &self,
        jobs: &JobSystem,
        points: &[Vec3],
        out: &mut BatchAnswers<Proxy>,
    ) -> Result<(), BatchError> {
        self.query_points_map(jobs, points, |_, proxy| Some(proxy), out)
    }

    /// [`query_points`](Self::query_points) with each hit of point `i`
    /// through `map(i, proxy)`: those it maps to `None` are left out.
    ///
    /// # Errors
    /// As [`query_points`](Self::query_points).
    pub fn query_points_map<T: Send>(
        &self,
        jobs: &JobSystem,
        points: &[Vec3],
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut BatchAnswers<T>,
    ) -> Result<(), BatchError> {
        let find = |&p: &Vec3, ids: &mut Vec<u32>, found: &mut Vec<Proxy>| {
            self.append_aabb(&Aabb::new(p, p), ids, found);
        };
        self.shapes(jobs, points, check_point, find, map, out)
    }

    /// Every proxy whose box each sphere of `spheres` meets
    /// ([`Sphere::overlaps`]), on the threads of `jobs`: the answer of
    /// sphere `i` is [`query_sphere`](Self::query_sphere)'s (sorted by
    /// handle).
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first sphere that breaks its
    /// contract, or [`BatchError::Job`]; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{BatchAnswers, PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, Sphere};
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let crate_ = world.insert(Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0)), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// let blasts = [Sphere::new(Vec3::ZERO, 3.0), Sphere::new(Vec3::ZERO, 4.0)];
    /// let mut hit = BatchAnswers::default();
    /// world.queries(&jobs)?.query_spheres(&jobs, &blasts, &mut hit)?;
    /// assert!(hit.hits(0).is_empty()); // the corner is √12 ≈ 3.46 away
    /// assert_eq!(hit.hits(1), [crate_]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_spheres(
        &self,
        jobs: &JobSystem,
        spheres: &[Sphere],
        out: &mut BatchAnswers<Proxy>,
    ) -> Result<(), BatchError> {
        self.query_spheres_map(jobs, spheres, |_, proxy| Some(proxy), out)
    }

    /// [`query_spheres`](Self::query_spheres) with each hit of sphere `i`
    /// through `map(i, proxy)`: those it maps to `None` are left out.
    ///
    /// # Errors
    /// As [`query_spheres`](Self::query_spheres).
    pub fn query_spheres_map<T: Send>(
        &self,
        jobs: &JobSystem,
        spheres: &[Sphere],
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut BatchAnswers<T>,
    ) -> Result<(), BatchError> {
        let find = |s: &Sphere, ids: &mut Vec<u32>, found: &mut Vec<Proxy>| {
            self.append_sphere(s, ids, found);
        };
        self.shapes(jobs, spheres, check_sphere, find, map, out)
    }

    /// Every proxy whose box each region of `regions`
    /// [meets](RegionTest::meets), on the threads of `jobs`: the answer of
    /// region `i` is [`query_with`](Self::query_with)'s (sorted by handle)
    /// — the frustums of several views, the capsules of several
    /// characters.
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first region refused (its
    /// [`validate`](RegionTest::validate), or bounds that break the box
    /// contract), or [`BatchError::Job`]; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{BatchAnswers, PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, Capsule};
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let near = world.insert(Aabb::new(Vec3::new(0.0, 1.0, 0.0), Vec3::splat(2.0)), ProxyKind::Static)?;
    /// let far = world.insert(Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// let capsules = [Capsule::new(Vec3::ZERO, Vec3::X, 1.0), Capsule::new(Vec3::splat(4.0), Vec3::splat(7.0), 0.5)];
    /// let mut found = BatchAnswers::default();
    /// world.queries(&jobs)?.query_regions(&jobs, &capsules, &mut found)?;
    /// assert_eq!((found.hits(0), found.hits(1)), (&[near][..], &[far][..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_regions<R: RegionTest + Sync>(
        &self,
        jobs: &JobSystem,
        regions: &[R],
        out: &mut BatchAnswers<Proxy>,
    ) -> Result<(), BatchError> {
        self.query_regions_map(jobs, regions, |_, proxy| Some(proxy), out)
    }

    /// [`query_regions`](Self::query_regions) with each hit of region `i`
    /// through `map(i, proxy)`: those it maps to `None` are left out.
    ///
    /// # Errors
    /// As [`query_regions`](Self::query_regions).
    pub fn query_regions_map<R: RegionTest + Sync, T: Send>(
        &self,
        jobs: &JobSystem,
        regions: &[R],
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut BatchAnswers<T>,
    ) -> Result<(), BatchError> {
        let find = |r: &R, ids: &mut Vec<u32>, found: &mut Vec<Proxy>| {
            self.append_region(r, r.bounds(), ids, found);
        };
        self.shapes(jobs, regions, check_region, find, map, out)
    }

    /// A batch of shape queries: `find` appends a checked query's proxies
    /// in the single query's order, and `map` takes and translates them.
    fn shapes<Q: Sync, T: Send>(
        &self,
        jobs: &JobSystem,
        queries: &[Q],
        check: impl Fn(&Q, usize) -> Result<(), BatchError>,
        find: impl Fn(&Q, &mut Vec<u32>, &mut Vec<Proxy>) + Sync,
        map: impl Fn(usize, Proxy) -> Option<T> + Sync,
        out: &mut BatchAnswers<T>,
    ) -> Result<(), BatchError> {
        out.run(jobs, queries, check, |index, query, scratch, items| {
            let Scratch { ids, proxies, .. } = scratch;
            proxies.clear();
            find(query, ids, proxies);
            items.extend(proxies.iter().filter_map(|&p| map(index, p)));
        })
    }
}
