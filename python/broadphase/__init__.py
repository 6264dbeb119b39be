"""Broad-phase collision detection and neighbor search on numpy arrays.

The Rust crate ``broadphase`` behind numpy's idiom: arrays in, arrays out.

- ``overlap_pairs(mins, maxs)``: every overlapping pair of a set of boxes.
- ``Grid(mins, maxs)``: boxes indexed once, then batches of box, point,
  sphere and ray queries (first hits or all hits).
- ``neighbor_pairs(points, r)`` and ``neighbor_lists(points, r)``: points
  within ``r`` of each other, in open space or in a box whose faces wrap.
- ``neighbors_of(points, queries, r)``: the points within ``r`` of each
  query point, or of each point of a subset.
- ``sphere_pairs(centers, radii)``: every pair of touching spheres, radii
  of any spread.
- ``VerletLists(r, skin)``: neighbor lists reused across the steps of a
  simulation while no point has moved more than ``skin / 2``.
- ``PersistentBroadPhase``: boxes that persist and move across the steps
  of a simulation, with the pairs that started and ended at each step,
  and the same queries as ``Grid`` on the boxes as they stand.

Pair arrays own memory that comes back to the package when Python frees
them, and the next call writes its pairs there: a loop that drops each
step's pairs reuses one buffer. ``release_pooled_memory()`` frees what is
kept.

``neighbor_pairs``, ``neighbor_lists``, ``overlap_pairs`` and
``sphere_pairs`` take ``backend="cpu"`` (the default), ``"gpu"`` or
``"auto"``: the GPU backend
(Vulkan, in builds with the cargo feature ``gpu``) gives exactly the CPU's
answer; where it is missing ``"gpu"`` raises ``GpuUnavailable`` (a
``RuntimeError``) and ``"auto"`` runs on the CPU. ``last_backend()`` says
which one answered; ``gpu_adapter()`` names the GPU adapter, if any.

Coordinates are float32 or float64 arrays of shape ``(n, 3)`` or
``(n, 2)``; the work runs in float32 (see each function for how float64 is
rounded). Bad input raises ``ValueError`` naming the first bad row. Every
call releases the GIL while it works; ``threads=`` runs it on that many
threads (None: one), where the crates have a parallel path.
"""

import os as _os

from ._broadphase import (
    GpuUnavailable,
    Grid,
    PersistentBroadPhase,
    VerletLists,
    __version__,
    _stop_workers_before_fork,
    gpu_adapter,
    gpu_unavailable_reason,
    last_backend,
    neighbor_lists,
    neighbor_pairs,
    neighbors_of,
    overlap_pairs,
    release_pooled_memory,
    sphere_pairs,
)

# A forked child must not inherit worker threads caught mid-lock: stop
# them before every fork (they start again on the next call).
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(before=_stop_workers_before_fork)

__all__ = [
    "GpuUnavailable",
    "Grid",
    "PersistentBroadPhase",
    "VerletLists",
    "__version__",
    "gpu_adapter",
    "gpu_unavailable_reason",
    "last_backend",
    "neighbor_lists",
    "neighbor_pairs",
    "neighbors_of",
    "overlap_pairs",
    "release_pooled_memory",
    "sphere_pairs",
]
