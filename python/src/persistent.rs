//! `PersistentBroadPhase`: the crate's persistent broad phase for
//! simulation loops, with the caller's integer ids as its slots.

use crate::convert::{Coords, bad_row, boxes, ids as id_array, pairs_array, show};
use crate::order::build_csr;
use crate::shapes::{FirstHitArrays, RayHitArrays, RayHitRows, SliceRows, rays_from, spheres};
use crate::threads::{detached, failed, job_system};
use broadphase::Aabb;
use broadphase::persistent::{
    self, BatchAnswers, PersistentConfig, Proxy, ProxyError, ProxyKind, QueryView,
};
use broadphase::query::BatchError;
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::HashSet;

/// Ids are slots, and every slot up to the largest id costs memory (about
/// 60 bytes), so an id is capped well below what would exhaust a machine:
/// a stray large id is an error, not an abort.
const MAX_ID: u32 = (1 << 28) - 1;

/// The broad phase of a simulation loop: boxes that persist and move from
/// one step to the next, under ids the caller picks.
///
/// Each step, set the boxes that moved (or appeared) with ``set_boxes``,
/// drop the ones that left with ``remove``, call ``update``, then read
/// ``pairs`` (every overlapping pair now), ``started`` (pairs that began
/// overlapping in this update) and ``ended`` (pairs that stopped, or lost
/// a removed box). A step costs what moved: boxes are indexed enlarged by
/// ``margin`` times their largest extent, and one that stays inside its
/// enlarged box is not re-indexed. The answer is always the exact set of
/// overlapping pairs of the current boxes (inclusive, as in
/// ``overlap_pairs``), except pairs of two static boxes, which are never
/// reported.
///
/// Ids are integers in ``0 .. 2**28 - 1`` that index the structure's
/// slots: keep them dense (``0 .. n``), as memory follows the largest id.
/// Pair arrays are ``(m, 2)`` uint32 ``(i, j)`` with ``i < j``, rows sorted.
///
/// ``query``, ``query_points``, ``query_spheres``, ``cast_rays`` and
/// ``rays_hits`` ask what ``Grid``'s methods of those names ask, of the
/// boxes as they stand now (set or removed since the last ``update``
/// included), and answer with ids.
///
/// Parameters
/// ----------
/// margin : float, optional
///     The enlargement, a fraction of a box's largest extent (default
///     0.5; 0 re-indexes every box that moves, which pays when everything
///     moves far each step).
/// threads : int, optional
///     Threads for ``set_boxes`` and ``update``, the calling one included:
///     None (the default) is one, 0 one per core.
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> world = broadphase.PersistentBroadPhase()
/// >>> world.set_boxes(np.array([0, 1]), np.zeros((2, 3)), np.ones((2, 3)))
/// >>> world.update()
/// >>> world.started
/// array([[0, 1]], dtype=uint32)
#[pyclass(module = "broadphase")]
#[derive(Debug)]
pub(crate) struct PersistentBroadPhase {
    world: persistent::PersistentBroadPhase,
    /// The live proxy of each id.
    handles: Vec<Option<Proxy>>,
    /// Columns of the boxes set so far (2 or 3), once any were.
    dims: Option<usize>,
    /// The `threads=` argument, checked: each call takes the process's job
    /// system for it, since one kept here would outlive a `fork` whose
    /// child has none of its worker threads.
    threads: Option<i64>,
}

fn proxy_error(error: ProxyError) -> PyErr {
    match error {
        ProxyError::Input(e) => PyValueError::new_err(e.to_string()),
        other => failed(other),
    }
}

/// Pairs of proxies as pairs of ids.
fn id_pairs(pairs: &[[Proxy; 2]]) -> Vec<[u32; 2]> {
    pairs.iter().map(|[a, b]| [a.index(), b.index()]).collect()
}

impl PersistentBroadPhase {
    /// Refuses an id given twice, naming the first (`id_array` refused
    /// those past `MAX_ID`).
    fn check_ids(ids: &[u32]) -> PyResult<()> {
        let mut seen = HashSet::with_capacity(ids.len());
        for (position, &id) in ids.iter().enumerate() {
            if !seen.insert(id) {
                return Err(bad_row(
                    "id",
                    position,
                    format!("ids[{position}] = {id} was given earlier in the same call"),
                ));
            }
        }
        Ok(())
    }

    fn live(&self, id: u32) -> Option<Proxy> {
        self.handles.get(id as usize).copied().flatten()
    }

    /// Refuses queries of another column count than the boxes set so far
    /// (any, while none were).
    /// The handles of `ids`, or the error naming the first id that is not
    /// present.
    fn live_proxies(&self, ids: &[u32]) -> PyResult<Vec<Proxy>> {
        let mut proxies = Vec::with_capacity(ids.len());
        for (position, &id) in ids.iter().enumerate() {
            match self.live(id) {
                Some(proxy) => proxies.push(proxy),
                None => {
                    return Err(bad_row(
                        "id",
                        position,
                        format!("ids[{position}] = {id} is not in the broad phase"),
                    ));
                }
            }
        }
        Ok(proxies)
    }

    fn check_dims(&self, coords: &Coords<'_>, name: &str) -> PyResult<()> {
        match self.dims {
            Some(dims) if dims != coords.dims() => Err(PyValueError::new_err(format!(
                "{name} has {} columns but this broad phase holds boxes of {dims}",
                coords.dims()
            ))),
            _ => Ok(()),
        }
    }

    /// The rays of `origins`, `dirs` and `max_t`, checked (as
    /// ``cast_rays`` documents) and of this structure's columns.
    fn rays_of(
        &self,
        origins: &Bound<'_, PyAny>,
        dirs: &Bound<'_, PyAny>,
        max_t: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<broadphase::query::Ray>> {
        rays_from(origins, dirs, max_t, |origins| self.check_dims(origins, "origins"))
    }

    /// The CSR rows of ids that `batch` fills on a view of the current
    /// boxes, on this broad phase's threads, with the interpreter released.
    fn id_rows<'py>(
        &mut self,
        py: Python<'py>,
        batch: impl FnOnce(
            &QueryView<'_>,
            &broadphase::JobSystem,
            &mut BatchAnswers<u32>,
        ) -> Result<(), BatchError>
        + Send,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let jobs = job_system(self.threads)?;
        let columns = self.handles.len();
        let world = &mut self.world;
        let csr = detached(py, move || {
            let view = world.queries(&jobs).map_err(proxy_error)?;
            let mut answers = BatchAnswers::default();
            batch(&view, &jobs, &mut answers).map_err(failed)?;
            let rows = SliceRows { offsets: answers.offsets(), entries: answers.items() };
            // Each row comes sorted by handle: by id.
            build_csr(&jobs, &rows, columns, false)
        })??;
        Ok(csr.into_arrays(py))
    }
}

/// A proxy as the id it was set under.
fn id_of(_: usize, proxy: Proxy) -> Option<u32> {
    Some(proxy.index())
}

#[pymethods]
impl PersistentBroadPhase {
    #[new]
    #[pyo3(signature = (margin = 0.5, threads = None))]
    fn new(margin: f64, threads: Option<i64>) -> PyResult<Self> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "margin must be a finite number >= 0, got {}",
                show(margin)
            )));
        }
        let config = PersistentConfig { margin: margin as f32, ..PersistentConfig::default() };
        Ok(Self {
            world: persistent::PersistentBroadPhase::with_config(config),
            handles: Vec::new(),
            dims: None,
            threads: job_system(threads).map(|_| threads)?,
        })
    }

    /// Sets the boxes of ``ids``: an id not present yet is added, one
    /// present gets its new box. Nothing changes until ``update``.
    ///
    /// Parameters
    /// ----------
    /// ids : ndarray, shape (n,), integer
    ///     Each id at most once per call.
    /// mins, maxs : ndarray, shape (n, 3) or (n, 2), float32 or float64
    ///     The boxes, under the rules of ``overlap_pairs``; every call
    ///     must use the same number of columns.
    /// static : bool, optional
    ///     Whether these boxes are static (never moving; two static boxes
    ///     are never reported as a pair). Applies to every id of the call,
    ///     new or present (default False).
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     The whole call is refused, naming the first bad box or id.
    #[pyo3(signature = (ids, mins, maxs, r#static = false))]
    fn set_boxes(
        &mut self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        mins: &Bound<'_, PyAny>,
        maxs: &Bound<'_, PyAny>,
        r#static: bool,
    ) -> PyResult<()> {
        let ids = id_array(ids, "ids", "id", MAX_ID)?;
        let (mins, maxs) = (Coords::extract(mins, "mins")?, Coords::extract(maxs, "maxs")?);
        if mins.len() != ids.len() {
            return Err(PyValueError::new_err(format!(
                "{} ids but {} boxes",
                ids.len(),
                mins.len()
            )));
        }
        if let Some(dims) = self.dims
            && dims != mins.dims()
        {
            return Err(PyValueError::new_err(format!(
                "boxes of {} columns, but this broad phase holds boxes of {dims}",
                mins.dims()
            )));
        }
        let boxes = boxes(&mins, &maxs, "box")?;
        Self::check_ids(&ids)?;
        self.dims = Some(mins.dims());
        let kind = if r#static { ProxyKind::Static } else { ProxyKind::Dynamic };
        let (mut present, mut moved, mut added): (Vec<Proxy>, Vec<Aabb>, Vec<(u32, Aabb)>) =
            (Vec::new(), Vec::new(), Vec::new());
        for (&id, &aabb) in ids.iter().zip(&boxes) {
            match self.live(id) {
                Some(proxy) => {
                    present.push(proxy);
                    moved.push(aabb);
                }
                None => added.push((id, aabb)),
            }
        }
        drop(boxes);
        if let Some(&(id, _)) = added.iter().max_by_key(|(id, _)| *id)
            && id as usize >= self.handles.len()
        {
            self.handles.resize(id as usize + 1, None);
        }
        let jobs = job_system(self.threads)?;
        let Self { world, handles, .. } = self;
        detached(py, move || -> PyResult<()> {
            for &proxy in &present {
                if world.kind(proxy).map_err(proxy_error)? != kind {
                    world.set_kind(proxy, kind).map_err(proxy_error)?;
                }
            }
            world.set_aabbs(&jobs, &present, &moved).map_err(proxy_error)?;
            for (id, aabb) in added {
                handles[id as usize] = Some(world.insert_at(id, aabb, kind).map_err(proxy_error)?);
            }
            Ok(())
        })?
    }

    /// Removes ``ids``; their pairs are reported in ``ended`` by the next
    /// ``update``, and the ids may be set again at once.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     The whole call is refused, naming the first id that is not
    ///     present or is given twice.
    fn remove(&mut self, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = id_array(ids, "ids", "id", MAX_ID)?;
        Self::check_ids(&ids)?;
        let proxies = self.live_proxies(&ids)?;
        self.world.remove_many(&proxies).map_err(proxy_error)?;
        for id in ids {
            self.handles[id as usize] = None;
        }
        Ok(())
    }

    /// Marks ``ids`` asleep (``asleep=True``) or awake: a hint that changes
    /// no output. The pairs of two boxes that are each asleep or static are
    /// kept aside from the next ``update`` on and not re-tested until one
    /// of the two is set, removed or woken, so a simulation whose bodies
    /// mostly rest pays for what moves. Such pairs stay in ``pairs``; a box
    /// set again is awake only if marked so.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     The whole call is refused, naming the first id that is not
    ///     present.
    #[pyo3(signature = (ids, asleep = true))]
    fn set_asleep(&mut self, ids: &Bound<'_, PyAny>, asleep: bool) -> PyResult<()> {
        let ids = id_array(ids, "ids", "id", MAX_ID)?;
        let proxies = self.live_proxies(&ids)?;
        for proxy in proxies {
            self.world.set_asleep(proxy, asleep).map_err(proxy_error)?;
        }
        Ok(())
    }

    /// Turns every ``set_boxes`` and ``remove`` since the last update into
    /// ``pairs``, ``started`` and ``ended``.
    fn update(&mut self, py: Python<'_>) -> PyResult<()> {
        let jobs = job_system(self.threads)?;
        let world = &mut self.world;
        detached(py, move || world.update(&jobs))?.map_err(proxy_error)
    }

    /// Every overlapping pair as of the last ``update`` (pairs of two
    /// static boxes left out).
    #[getter]
    fn pairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        pairs_array(py, id_pairs(self.world.pairs()))
    }

    /// The pairs of the last ``update`` with at least one box neither
    /// asleep (``set_asleep``) nor static: all of ``pairs`` when nothing
    /// sleeps, and what a simulation step works on.
    #[getter]
    fn awake_pairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        pairs_array(py, id_pairs(self.world.awake_pairs()))
    }

    /// The pairs of the last ``update`` that were not pairs before it.
    #[getter]
    fn started<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        pairs_array(py, id_pairs(self.world.started()))
    }

    /// The pairs before the last ``update`` that are no longer pairs: the
    /// boxes separated, one was removed, or both became static.
    #[getter]
    fn ended<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        pairs_array(py, id_pairs(self.world.ended()))
    }

    /// The number of boxes present.
    fn __len__(&self) -> usize {
        self.world.len()
    }

    /// Whether ``id`` is present.
    fn __contains__(&self, id: i64) -> bool {
        u32::try_from(id).is_ok_and(|id| self.live(id).is_some())
    }

    fn __repr__(&self) -> String {
        format!(
            "PersistentBroadPhase(boxes={}, pairs={})",
            self.world.len(),
            self.world.pairs().len()
        )
    }

    /// The ids whose boxes overlap each query box (faces included).
    ///
    /// Queries see every box as it stands now: boxes set or removed since
    /// the last ``update`` included (``pairs`` waits for ``update``;
    /// queries do not).
    ///
    /// Parameters
    /// ----------
    /// mins, maxs : ndarray, shape (m, dims), float32 or float64
    ///     The query boxes, as for ``Grid.query`` (float64 rounded
    ///     outward), with the columns of the boxes set.
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows, one per query, each ascending: ids, int32 when every
    ///     value fits (int64 otherwise). Runs on the broad phase's
    ///     ``threads``.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, broadphase
    /// >>> world = broadphase.PersistentBroadPhase()
    /// >>> world.set_boxes(np.array([4, 7]), np.array([[0.0, 0], [5, 0]]), np.array([[1.0, 1], [6, 1]]))
    /// >>> world.query(np.array([[0.5, 0.5]]), np.array([[5.0, 0.5]]))
    /// (array([0, 2], dtype=int32), array([4, 7], dtype=int32))
    fn query<'py>(
        &mut self,
        py: Python<'py>,
        mins: &Bound<'py, PyAny>,
        maxs: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let (mins, maxs) = (Coords::extract(mins, "mins")?, Coords::extract(maxs, "maxs")?);
        self.check_dims(&mins, "mins")?;
        let queries = boxes(&mins, &maxs, "query box")?;
        self.id_rows(py, move |view, jobs, out| view.query_aabbs_map(jobs, &queries, id_of, out))
    }

    /// The ids whose boxes contain each point (faces included), as
    /// ``Grid.query_points`` (float64 points rounded to nearest), against
    /// the boxes as they stand now (see ``query``).
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows of ids, one per point, each ascending.
    fn query_points<'py>(
        &mut self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let points = Coords::extract(points, "points")?;
        self.check_dims(&points, "points")?;
        let points = points.points("point")?;
        self.id_rows(py, move |view, jobs, out| view.query_points_map(jobs, &points, id_of, out))
    }

    /// The ids whose boxes each sphere meets (touching counts), as
    /// ``Grid.query_spheres`` (``radii`` one float or one per sphere,
    /// rounded up), against the boxes as they stand now (see ``query``).
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows of ids, one per sphere, each ascending.
    fn query_spheres<'py>(
        &mut self,
        py: Python<'py>,
        centers: &Bound<'py, PyAny>,
        radii: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let centers = Coords::extract(centers, "centers")?;
        self.check_dims(&centers, "centers")?;
        let spheres = spheres(&centers, radii)?;
        self.id_rows(py, move |view, jobs, out| view.query_spheres_map(jobs, &spheres, id_of, out))
    }

    /// The first box each ray hits, as ``Grid.cast_rays`` (same rays,
    /// same rounding; ties go to the lower id), against the boxes as they
    /// stand now (see ``query``).
    ///
    /// Returns
    /// -------
    /// id : ndarray, shape (m,), int64
    ///     The id hit first, -1 where none.
    /// t : ndarray, shape (m,), float32
    ///     Where the ray enters its box, ``inf`` where none.
    #[pyo3(signature = (origins, dirs, max_t = None))]
    fn cast_rays<'py>(
        &mut self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        dirs: &Bound<'py, PyAny>,
        max_t: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<FirstHitArrays<'py>> {
        let rays = self.rays_of(origins, dirs, max_t)?;
        let jobs = job_system(self.threads)?;
        let world = &mut self.world;
        let (id, t) = detached(py, move || -> PyResult<(Vec<i64>, Vec<f32>)> {
            let view = world.queries(&jobs).map_err(proxy_error)?;
            let mut hits = Vec::new();
            view.cast_rays_map(&jobs, &rays, id_of, &mut hits).map_err(failed)?;
            Ok(hits
                .iter()
                .map(|hit| hit.map_or((-1, f32::INFINITY), |(id, t)| (i64::from(id), t)))
                .unzip())
        })??;
        Ok((PyArray1::from_vec(py, id), PyArray1::from_vec(py, t)))
    }

    /// Every box each ray hits, as ``Grid.rays_hits``, against the boxes
    /// as they stand now (see ``query``).
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows of ids, one per ray, nearest first (by ``t``, ties by
    ///     id), each id once.
    /// t : ndarray, shape (len(indices),), float32
    ///     Where the ray enters each of those boxes.
    #[pyo3(signature = (origins, dirs, max_t = None))]
    fn rays_hits<'py>(
        &mut self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        dirs: &Bound<'py, PyAny>,
        max_t: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<RayHitArrays<'py>> {
        let rays = self.rays_of(origins, dirs, max_t)?;
        let jobs = job_system(self.threads)?;
        let columns = self.handles.len();
        let world = &mut self.world;
        let rows = detached(py, move || {
            let view = world.queries(&jobs).map_err(proxy_error)?;
            let mut answers = BatchAnswers::default();
            view.rays_hits_map(&jobs, &rays, id_of, &mut answers).map_err(failed)?;
            RayHitRows::new(&jobs, answers.offsets(), answers.items(), columns)
        })??;
        Ok(rows.into_arrays(py))
    }
}
