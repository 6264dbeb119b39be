//! The Python extension of broadphase: numpy arrays in, numpy arrays out.
//!
//! Each call checks and copies its arrays into the crates' types while it
//! holds the interpreter, runs the crates' work with the interpreter
//! released (other Python threads run meanwhile), and hands the results to
//! numpy without another copy. Bad input is a `ValueError` naming the first
//! bad row; a panic is caught at the boundary and becomes `RuntimeError`.
//! The Python package `broadphase` re-exports what is registered here.

mod contacts;
mod convert;
mod gpu;
mod grid;
mod neighbors;
mod order;
mod pairs;
mod persistent;
#[allow(
    unsafe_code,
    reason = "a pair array over a pooled buffer that its owner object keeps alive"
)]
mod pool;
mod query_sets;
mod regions;
mod shapes;
mod threads;
mod verlet;

use pyo3::prelude::*;

/// Broad-phase collision detection and neighbor search on numpy arrays.
#[pymodule]
fn _broadphase(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(threads::_stop_workers_before_fork, m)?)?;
    m.add_function(wrap_pyfunction!(pool::release_pooled_memory, m)?)?;
    m.add_function(wrap_pyfunction!(pairs::overlap_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(pairs::_time_overlap_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(neighbors::neighbor_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(neighbors::neighbor_lists, m)?)?;
    m.add_function(wrap_pyfunction!(neighbors::_neighbor_structure, m)?)?;
    m.add_function(wrap_pyfunction!(contacts::sphere_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(query_sets::neighbors_of, m)?)?;
    m.add_class::<verlet::VerletLists>()?;
    m.add_function(wrap_pyfunction!(regions::_region_cuts, m)?)?;
    m.add_function(wrap_pyfunction!(regions::_point_regions, m)?)?;
    m.add_function(wrap_pyfunction!(regions::_box_regions, m)?)?;
    m.add_function(wrap_pyfunction!(regions::_box_pair_owners, m)?)?;
    m.add_class::<grid::Grid>()?;
    m.add_class::<persistent::PersistentBroadPhase>()?;
    gpu::register(m)?;
    Ok(())
}
