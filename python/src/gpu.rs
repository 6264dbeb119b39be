//! `backend=`: whether `neighbor_pairs`, `neighbor_lists`, `overlap_pairs`
//! and `sphere_pairs` run on the CPU or on a GPU (the `broadphase-gpu` crate,
//! compiled in by the cargo feature `gpu`), the `GpuUnavailable` error, and
//! `last_backend()`, which says which one answered.

use broadphase::glam::Vec3;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::cell::Cell;

pyo3::create_exception!(
    broadphase,
    GpuUnavailable,
    PyRuntimeError,
    "Raised by ``backend=\"gpu\"`` where no GPU backend is here: this build has none \
     (the extension was compiled without the cargo feature ``gpu``), or it has one and \
     no Vulkan adapter was found (no GPU driver, and no software Vulkan such as \
     lavapipe from ``mesa-vulkan-drivers``). The message says which, as \
     ``gpu_unavailable_reason()`` does. A ``RuntimeError``; ``backend=\"auto\"`` never \
     raises it, running on the CPU instead."
);

/// The backend a call asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The CPU structures (the default).
    Cpu,
    /// The GPU; `GpuUnavailable` where there is none.
    Gpu,
    /// The GPU where it is available and takes the input, the CPU otherwise.
    Auto,
}

impl Backend {
    /// The `backend=` argument: `"cpu"`, `"gpu"` or `"auto"`.
    pub(crate) fn parse(name: &str) -> PyResult<Self> {
        match name {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            "auto" => Ok(Self::Auto),
            other => Err(PyValueError::new_err(format!(
                "backend must be \"cpu\", \"gpu\" or \"auto\", got {other:?}"
            ))),
        }
    }
}

thread_local! {
    /// The backend that answered this thread's last call taking `backend=`.
    static LAST: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Records which backend answered this thread's call.
pub(crate) fn ran_on(gpu: bool) {
    LAST.with(|last| last.set(Some(if gpu { "gpu" } else { "cpu" })));
}

/// Each pair of CSR rows once, `(i, j)` with `i < j`, in `(i, j)` order
/// where the rows are ascending.
pub(crate) fn pairs_of_rows(lists: &broadphase::neighbors::NeighborLists) -> Vec<[u32; 2]> {
    let mut pairs = Vec::with_capacity(lists.total() / 2);
    for i in 0..lists.len() {
        // Ids fit u32: the lists' own type.
        let a = i as u32;
        pairs.extend(lists.neighbors(i).iter().filter(|&&b| b > a).map(|&b| [a, b]));
    }
    pairs
}

/// Which backend answered this thread's last call of ``neighbor_pairs``,
/// ``neighbor_lists``, ``overlap_pairs`` or ``sphere_pairs``: ``"cpu"``
/// or ``"gpu"`` (None
/// before the first). With ``backend="auto"`` this says whether the GPU
/// ran or the call fell back to the CPU.
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> points = np.zeros((3, 3), dtype=np.float32)
/// >>> _ = broadphase.neighbor_pairs(points, 1.0, backend="auto")
/// >>> broadphase.last_backend() in ("cpu", "gpu")
/// True
#[pyfunction]
pub(crate) fn last_backend() -> Option<&'static str> {
    LAST.with(Cell::get)
}

/// The name of the GPU adapter ``backend="gpu"`` runs on, e.g.
/// ``"llvmpipe (LLVM 15.0.6, 256 bits)"`` for lavapipe (Vulkan on the
/// CPU, where the figures say nothing about a GPU's speed); None where
/// there is none (``gpu_unavailable_reason()`` says why). The first call
/// of this or of a ``backend="gpu"`` search opens the device, once per
/// process.
///
/// Examples
/// --------
/// >>> import broadphase
/// >>> name = broadphase.gpu_adapter()
/// >>> name is None or isinstance(name, str)
/// True
#[pyfunction]
pub(crate) fn gpu_adapter() -> Option<String> {
    device::context().ok().map(|context| context.adapter_name().to_owned())
}

/// Why ``backend="gpu"`` would raise ``GpuUnavailable``, or None where the
/// GPU backend is available. The reason is the message the error carries:
/// this build was compiled without the cargo feature ``gpu``, or no Vulkan
/// adapter was found (install ``mesa-vulkan-drivers`` for lavapipe, Vulkan
/// on the CPU, where no GPU is present).
///
/// Examples
/// --------
/// >>> import broadphase
/// >>> (broadphase.gpu_unavailable_reason() is None) == (broadphase.gpu_adapter() is not None)
/// True
#[pyfunction]
pub(crate) fn gpu_unavailable_reason() -> Option<String> {
    device::context().err()
}

/// Registers the exception and the functions of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("GpuUnavailable", m.py().get_type::<GpuUnavailable>())?;
    m.add_function(wrap_pyfunction!(last_backend, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_adapter, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_unavailable_reason, m)?)?;
    Ok(())
}

/// Whether a call asking for `backend` runs on the GPU, for `items`
/// items and radius `r` (`None` for box pairs). `Gpu`: yes where it is
/// available (else `GpuUnavailable`) and takes the input (else
/// `ValueError`); `Auto`: where both hold, the CPU otherwise.
pub(crate) fn use_gpu(backend: Backend, items: usize, r: Option<f32>) -> PyResult<bool> {
    match backend {
        Backend::Cpu => Ok(false),
        Backend::Gpu => {
            device::context().map_err(GpuUnavailable::new_err)?;
            device::takes(items, r).map_err(PyValueError::new_err)?;
            Ok(true)
        }
        Backend::Auto => Ok(device::context().is_ok() && device::takes(items, r).is_ok()),
    }
}

/// The GPU's neighbor lists of `points` (in `domain` where given), rows
/// ascending: the CPU's answer sorted. Only after [`use_gpu`] said yes.
#[cfg(feature = "gpu")]
pub(crate) fn neighbor_lists(
    points: &[Vec3],
    r: f32,
    domain: Option<&broadphase::neighbors::PeriodicDomain>,
) -> PyResult<broadphase::neighbors::NeighborLists> {
    device::neighbor_lists(points, r, domain)
}

/// The GPU's overlapping pairs, `(i, j)` with `i < j`, sorted.
#[cfg(feature = "gpu")]
pub(crate) fn overlap_pairs(boxes: &[broadphase::Aabb]) -> PyResult<Vec<[u32; 2]>> {
    device::overlap_pairs(boxes)
}

/// The GPU's touching spheres, `(i, j)` with `i < j`, sorted.
#[cfg(feature = "gpu")]
pub(crate) fn sphere_contacts(centers: &[Vec3], radii: &[f32]) -> PyResult<Vec<[u32; 2]>> {
    device::sphere_contacts(centers, radii)
}

/// Without the feature nothing reaches these: [`use_gpu`] always says no.
#[cfg(not(feature = "gpu"))]
pub(crate) fn neighbor_lists(
    _points: &[Vec3],
    _r: f32,
    _domain: Option<&broadphase::neighbors::PeriodicDomain>,
) -> PyResult<broadphase::neighbors::NeighborLists> {
    Err(GpuUnavailable::new_err(device::NOT_BUILT))
}

/// Without the feature nothing reaches these: [`use_gpu`] always says no.
#[cfg(not(feature = "gpu"))]
pub(crate) fn overlap_pairs(_boxes: &[broadphase::Aabb]) -> PyResult<Vec<[u32; 2]>> {
    Err(GpuUnavailable::new_err(device::NOT_BUILT))
}

/// Without the feature nothing reaches these: [`use_gpu`] always says no.
#[cfg(not(feature = "gpu"))]
pub(crate) fn sphere_contacts(_centers: &[Vec3], _radii: &[f32]) -> PyResult<Vec<[u32; 2]>> {
    Err(GpuUnavailable::new_err(device::NOT_BUILT))
}

#[cfg(not(feature = "gpu"))]
mod device {
    //! This build has no GPU backend.

    /// The `GpuUnavailable` message of a build without the feature.
    pub(super) const NOT_BUILT: &str = "this build of broadphase has no GPU backend: \
        it was compiled without the cargo feature `gpu` (build it with \
        `maturin develop --release --features gpu`)";

    /// Stands in for the device: there is none.
    #[derive(Debug)]
    pub(super) struct NoContext;

    impl NoContext {
        pub(super) fn adapter_name(&self) -> &str {
            ""
        }
    }

    pub(super) fn context() -> Result<&'static NoContext, String> {
        Err(NOT_BUILT.to_owned())
    }

    pub(super) fn takes(_items: usize, _r: Option<f32>) -> Result<(), String> {
        Err(NOT_BUILT.to_owned())
    }
}

#[cfg(feature = "gpu")]
mod device {
    //! One device per process, opened on first use, and one search (and
    //! one box-pair finder) on it, kept so their buffers and compiled
    //! shaders serve every later call.

    use super::GpuUnavailable;
    use broadphase::Aabb;
    use broadphase::glam::Vec3;
    use broadphase::neighbors::{NeighborListSearch, NeighborLists, PeriodicDomain};
    use broadphase_gpu::{GpuBoxPairs, GpuContext, GpuError, GpuNeighborSearch, MIN_RADIUS};
    use pyo3::exceptions::{PyRuntimeError, PyValueError};
    use pyo3::prelude::*;
    use std::sync::{Mutex, MutexGuard, OnceLock};

    /// The device, or why there is none (the `GpuUnavailable` message).
    ///
    /// A forked child inherits the device but not the driver's threads
    /// (lavapipe's among them): a call there would wait forever, so the
    /// device answers only in the process that opened it.
    pub(super) fn context() -> Result<&'static GpuContext, String> {
        static CONTEXT: OnceLock<(u32, Result<GpuContext, String>)> = OnceLock::new();
        let (opened_by, context) = CONTEXT.get_or_init(|| {
            let context = GpuContext::new().map_err(|e| format!("no GPU backend here: {e}"));
            (std::process::id(), context)
        });
        if *opened_by != std::process::id() {
            return Err(format!(
                "the GPU device was opened by process {opened_by}, and this process is a \
                 fork of it: a device does not survive a fork (use the \"spawn\" or \
                 \"forkserver\" start method, or first use the GPU after forking)"
            ));
        }
        context.as_ref().map_err(Clone::clone)
    }

    fn lock<T>(
        cell: &'static OnceLock<Mutex<T>>,
        make: impl FnOnce() -> T,
    ) -> MutexGuard<'static, T> {
        // A panic inside a call leaves nothing half-written that a later
        // call reads: each call overwrites what it uses.
        cell.get_or_init(|| Mutex::new(make())).lock().unwrap_or_else(|p| p.into_inner())
    }

    fn search(context: &GpuContext) -> MutexGuard<'static, GpuNeighborSearch> {
        static SEARCH: OnceLock<Mutex<GpuNeighborSearch>> = OnceLock::new();
        lock(&SEARCH, || GpuNeighborSearch::new(context))
    }

    fn box_pairs(context: &GpuContext) -> MutexGuard<'static, GpuBoxPairs> {
        static PAIRS: OnceLock<Mutex<GpuBoxPairs>> = OnceLock::new();
        lock(&PAIRS, || GpuBoxPairs::new(context))
    }

    /// Whether the GPU takes `items` items (and radius `r`), or why not:
    /// what it refuses that the CPU takes (radii below `MIN_RADIUS`, more
    /// items than one dispatch or buffer holds).
    pub(super) fn takes(items: usize, r: Option<f32>) -> Result<(), String> {
        let context = context()?;
        if let Some(r) = r.filter(|&r| r < MIN_RADIUS) {
            return Err(format!(
                "backend=\"gpu\" takes radii of at least {MIN_RADIUS:e} (2**-30, where flushed \
                 subnormals cannot change a comparison), got {r:e}; the CPU backend takes it"
            ));
        }
        // Read once: later calls must not wait on a search another thread
        // is running while they hold the interpreter.
        static MOST: OnceLock<usize> = OnceLock::new();
        let most = *MOST.get_or_init(|| search(context).max_points());
        if items > most {
            return Err(format!(
                "backend=\"gpu\" takes at most {most} items a call on this device, got {items}"
            ));
        }
        Ok(())
    }

    pub(super) fn neighbor_lists(
        points: &[Vec3],
        r: f32,
        domain: Option<&PeriodicDomain>,
    ) -> PyResult<NeighborLists> {
        let context = context().map_err(GpuUnavailable::new_err)?;
        let mut lists = NeighborLists::default();
        let mut gpu = search(context);
        match domain {
            Some(domain) => gpu.find_periodic_neighbor_lists(domain, points, r, &mut lists),
            None => gpu.find_neighbor_lists(points, r, &mut lists),
        }
        .map_err(error)?;
        Ok(lists)
    }

    pub(super) fn overlap_pairs(boxes: &[Aabb]) -> PyResult<Vec<[u32; 2]>> {
        let context = context().map_err(GpuUnavailable::new_err)?;
        let mut pairs = crate::pool::take();
        box_pairs(context).find_pairs(boxes, &mut pairs).map_err(error)?;
        Ok(pairs)
    }

    pub(super) fn sphere_contacts(centers: &[Vec3], radii: &[f32]) -> PyResult<Vec<[u32; 2]>> {
        let context = context().map_err(GpuUnavailable::new_err)?;
        let mut pairs = crate::pool::take();
        search(context).find_sphere_contacts(centers, radii, &mut pairs).map_err(error)?;
        Ok(pairs)
    }

    /// The Python error for what the GPU refused or failed with: bad input
    /// as the CPU path reports it, the rest a `RuntimeError` saying why.
    fn error(error: GpuError) -> PyErr {
        match error {
            GpuError::Point(e) => crate::neighbors::point_error(e),
            GpuError::Periodic(e) => crate::neighbors::periodic_error(e),
            GpuError::Input(e) => PyValueError::new_err(format!("bad box: {e}")),
            GpuError::NoAdapter { .. } => GpuUnavailable::new_err(error.to_string()),
            other => PyRuntimeError::new_err(format!("the GPU backend failed: {other}")),
        }
    }
}
