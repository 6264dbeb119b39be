"""Exact pairs and neighbors of ``dask.array`` inputs, region by region.

``neighbor_pairs``, ``neighbor_lists`` and ``overlap_pairs`` take arrays
chunked by rows (any chunking) and return lazy dask arrays holding what the
single-machine functions of the same names return, with global row
indices. Importing ``broadphase`` does not import this module or dask.

How a computation runs:

1. A sample pass takes a few rows of every chunk (box centers for boxes)
   and cuts space into regions at the sample's quantiles: slabs along the
   axis the sample spreads widest (the crates' ``Regions``).
2. One shuffle: each chunk sends every point to its home region and to
   the regions within ``r`` of it (its halo; across the wrap with
   ``periodic=``), every box to each region it overlaps.
3. Each region runs the single-machine search over what it was sent, and
   keeps only the pairs it owns: a pair of points belongs to the home
   region of its lower-index point (which holds the other point in its
   halo); a pair of boxes belongs to the region holding the low corner of
   their intersection (the per-axis max of their mins). Every pair comes
   out of exactly one region.
4. The pairs go to the output chunk of their first index, which sorts
   them: output chunk ``c`` holds the pairs whose first index lies in input
   chunk ``c``, so the whole array is ordered by ``(i, j)``.

Bad input in any chunk raises ``ValueError`` naming the global row, on the
client, when the result is computed; a wrong shape, dtype, radius or
periodic box raises at once.
"""

import math
import re
from functools import partial
from operator import getitem

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _broadphase
from . import neighbor_pairs as _neighbor_pairs
from . import overlap_pairs as _overlap_pairs

__all__ = ["neighbor_lists", "neighbor_pairs", "overlap_pairs"]

# Rows the sample pass takes in all: enough for quantiles within a
# fraction of a percent, small next to one chunk.
_SAMPLE_ROWS = 100_000

# Regions when the caller names none: one per input chunk, at most this
# many. More regions cost more halo (each slab face copies the points
# within r of it) for little more parallelism.
_DEFAULT_REGIONS_MAX = 32


def neighbor_pairs(points, r, periodic=None, regions=None):
    """Every pair of points within distance ``r`` of each other.

    The distributed twin of ``broadphase.neighbor_pairs``: the same rule
    (inclusive, float32, nearest image with ``periodic``), the same pairs.

    Parameters
    ----------
    points : dask.array.Array, shape (n, 3) or (n, 2), float32 or float64
        Chunked by rows, any chunk sizes (known ones: call
        ``compute_chunk_sizes()`` first if they are not). A numpy array is
        taken as one chunk.
    r : float
        The radius, as for ``broadphase.neighbor_pairs``.
    periodic : tuple, optional
        ``(lo, hi)`` or ``(lo, hi, wrap)``, as for
        ``broadphase.neighbor_pairs``: halos then reach across the wrap.
    regions : int, optional
        How many regions to cut space into, each searched by one task.
        None (the default): one per input chunk, at most 32.

    Returns
    -------
    dask.array.Array, shape (m, 2), uint32 (uint64 past 2**32 points)
        Each pair once as ``(i, j)`` with ``i < j``, ordered by ``(i, j)``:
        once computed, equal to ``broadphase.neighbor_pairs(points, r,
        periodic=periodic, sort=True)``. Its chunk sizes are unknown until
        computed; chunk ``c`` holds the pairs whose ``i`` lies in input
        chunk ``c``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import broadphase.dask
    >>> points = da.from_array(np.array([[0, 0, 0], [0.5, 0, 0], [5, 5, 5]], np.float32), chunks=2)
    >>> broadphase.dask.neighbor_pairs(points, 1.0).compute(scheduler="synchronous")
    array([[0, 1]], dtype=uint32)
    """
    graph = _PointGraph(points, r, periodic, regions, both_ways=False)
    return graph.pairs()



def neighbor_lists(points, r, periodic=None, regions=None):
    """Every point's neighbors within distance ``r``, as CSR rows.

    The distributed twin of ``broadphase.neighbor_lists`` (takes the
    arguments of ``neighbor_pairs`` here).

    Returns
    -------
    indptr, indices : dask.array.Array, int64
        The neighbors of point ``i`` are ``indices[indptr[i]:indptr[i +
        1]]``, ascending: once computed, equal to
        ``broadphase.neighbor_lists(points, r, periodic=periodic)`` (which
        is int32 where the values fit; these are always int64). ``indptr``
        is chunked like ``points`` (plus its leading 0); ``indices`` has
        one chunk per input chunk, sizes unknown until computed.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import broadphase.dask
    >>> points = da.from_array(np.array([[0, 0, 0], [0.5, 0, 0], [5, 5, 5]], np.float32), chunks=1)
    >>> indptr, indices = broadphase.dask.neighbor_lists(points, 1.0)
    >>> indptr.compute(scheduler="synchronous"), indices.compute(scheduler="synchronous")
    (array([0, 1, 2, 2]), array([1, 0]))
    """
    graph = _PointGraph(points, r, periodic, regions, both_ways=True)
    return graph.lists()



def overlap_pairs(mins, maxs, regions=None):
    """Every pair of overlapping boxes.

    The distributed twin of ``broadphase.overlap_pairs``: the same rule
    (inclusive; float64 rounded outward to float32), the same pairs.

    Parameters
    ----------
    mins, maxs : dask.array.Array, shape (n, 3) or (n, 2), float32 or float64
        The boxes' corners, chunked by rows (``maxs`` is rechunked to
        ``mins``' chunks).
    regions : int, optional
        As for ``neighbor_pairs``.

    Returns
    -------
    dask.array.Array, shape (m, 2), uint32 (uint64 past 2**32 boxes)
        Each pair once as ``(i, j)``, ``i < j``, ordered by ``(i, j)``: once
        computed, equal to ``broadphase.overlap_pairs(mins, maxs,
        sort=True)``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import broadphase.dask
    >>> mins = da.from_array(np.array([[0, 0, 0], [1, 1, 1], [5, 5, 5]], np.float32), chunks=1)
    >>> broadphase.dask.overlap_pairs(mins, mins + 1).compute(scheduler="synchronous")
    array([[0, 1]], dtype=uint32)
    """
    mins = _rows(mins, "mins")
    maxs = _rows(maxs, "maxs")
    if mins.shape != maxs.shape:
        raise ValueError(f"mins has shape {mins.shape} but maxs has shape {maxs.shape}")
    maxs = maxs.rechunk(mins.chunks)
    graph = _Graph(mins, regions, [maxs], "overlap-pairs")
    blocks = list(zip(graph.blocks(mins), graph.blocks(maxs)))
    graph.add_cuts(partial(_box_sample, take=graph.take), blocks)
    graph.add_split(partial(_split_boxes, count=graph.count), blocks)
    graph.add_regions(lambda k: partial(_owned_box_pairs, region=k, starts=graph.starts))
    return graph.pairs()


# --- building the graph ----------------------------------------------------


def _rows(x, name):
    """``x`` as a dask array of coordinate rows, one column chunk."""
    x = da.asarray(x)
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(f"{name} must have shape (n, 3) or (n, 2), got {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise ValueError(f"{name} has dtype {x.dtype}, expected float32 or float64")
    if any(math.isnan(c) for c in x.chunks[0]):
        raise ValueError(
            f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() first"
        )
    return x.rechunk({1: -1})


def _region_count(regions, chunks):
    if regions is None:
        return max(1, min(chunks, _DEFAULT_REGIONS_MAX))
    if isinstance(regions, bool) or not isinstance(regions, (int, np.integer)) or regions < 1:
        raise ValueError(f"regions must be a positive int, got {regions!r}")
    return int(regions)


def _pair_dtype(n):
    return np.uint32 if n <= 2**32 else np.uint64


class _Graph:
    """The task graph of one call: the sample pass, the cuts, the split of
    each chunk, one search per region, and one sort per output chunk, as
    plain tasks (no per-task graph objects, which cost quadratic time in
    the number of chunks and regions)."""

    def __init__(self, x, regions, others, label, params=()):
        self.n = x.shape[0]
        self.sizes = [int(c) for c in x.chunks[0]]
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64).tolist()
        self.chunks = len(self.sizes)
        self.count = _region_count(regions, self.chunks)
        self.take = max(1, -(-_SAMPLE_ROWS // self.chunks))
        self.inputs = [x, *others]
        # Every argument the tasks depend on is in the names: two calls
        # computed together must not share a key.
        token = tokenize(label, *(a.name for a in self.inputs), self.count, *params)
        self.name = f"{label}-{token}"
        self.layer = {}

    def key(self, stage, *at):
        return (f"{self.name}-{stage}", *at) if at else f"{self.name}-{stage}"

    @staticmethod
    def blocks(x):
        return [(x.name, c, 0) for c in range(x.numblocks[0])]

    def add_cuts(self, sample, blocks):
        for c, block in enumerate(blocks):
            self.layer[self.key("sample", c)] = (sample, *block)
        samples = [self.key("sample", c) for c in range(self.chunks)]
        self.layer[self.key("cuts")] = (partial(_cuts, count=self.count), samples)

    def add_split(self, split, blocks):
        """Each chunk split into one piece per region: the shuffle."""
        for c, block in enumerate(blocks):
            self.layer[self.key("split", c)] = (
                split,
                *block,
                self.starts[c],
                self.key("cuts"),
            )
            for k in range(self.count):
                self.layer[self.key("piece", c, k)] = (getitem, self.key("split", c), k)

    def add_regions(self, search):
        """One search per region over its pieces, its pairs split by
        output chunk."""
        for k in range(self.count):
            pieces = [self.key("piece", c, k) for c in range(self.chunks)]
            self.layer[self.key("region", k)] = (search(k), pieces, self.key("cuts"))
            for c in range(self.chunks):
                self.layer[self.key("found", k, c)] = (getitem, self.key("region", k), c)

    def found(self, c):
        return [self.key("found", k, c) for k in range(self.count)]

    def array(self, name, chunks, dtype):
        graph = HighLevelGraph.from_collections(name, self.layer, dependencies=self.inputs)
        return da.Array(graph, name, chunks, dtype=dtype)

    def pairs(self):
        """The pairs, sorted: output chunk ``c`` holds those whose first
        index lies in input chunk ``c``."""
        dtype = _pair_dtype(self.n)
        name = f"{self.name}-pairs"
        for c in range(self.chunks):
            self.layer[(name, c, 0)] = (partial(_sorted_pairs, dtype=dtype), self.found(c))
        return self.array(name, ((math.nan,) * self.chunks, (2,)), dtype)

    def lists(self):
        """``indptr`` and ``indices`` of the CSR rows."""
        indptr, indices = f"{self.name}-indptr", f"{self.name}-indices"
        for c in range(self.chunks):
            rows = partial(_csr_rows, start=self.starts[c], size=self.sizes[c])
            self.layer[self.key("rows", c)] = (rows, self.found(c))
            self.layer[self.key("entries", c)] = (_entry_count, self.key("rows", c))
            self.layer[(indices, c)] = (getitem, self.key("rows", c), 1)
        # Where each chunk's entries start: a sum of small counts, so no
        # chunk's rows travel for it.
        entries = [self.key("entries", c) for c in range(self.chunks)]
        self.layer[self.key("offsets")] = (_offsets, entries)
        for c in range(self.chunks):
            piece = partial(_indptr_piece, chunk=c)
            self.layer[(indptr, c)] = (piece, self.key("rows", c), self.key("offsets"))
        # The leading 0 travels with the first chunk.
        sizes = (self.sizes[0] + 1, *self.sizes[1:])
        return self.array(indptr, (sizes,), np.int64), self.array(
            indices, ((math.nan,) * self.chunks,), np.int64
        )


class _PointGraph(_Graph):
    """The graph of ``neighbor_pairs`` and ``neighbor_lists``."""

    def __init__(self, points, r, periodic, regions, both_ways):
        points = _rows(points, "points")
        # The radius and the periodic box are checked at once, by the
        # single-machine call on no points.
        _neighbor_pairs(np.empty((0, points.shape[1]), np.float32), r, periodic=periodic)
        r = float(np.float32(r))
        label = "neighbors" if both_ways else "neighbor-pairs"
        super().__init__(points, regions, [], label, params=(r, repr(periodic)))
        blocks = [(b,) for b in self.blocks(points)]
        self.add_cuts(partial(_point_sample, take=self.take), blocks)
        self.add_split(partial(_split_points, r=r, periodic=periodic, count=self.count), blocks)
        self.add_regions(
            lambda k: partial(
                _owned_point_pairs, r=r, periodic=periodic, starts=self.starts, both_ways=both_ways
            )
        )


# --- the tasks -------------------------------------------------------------


def _evenly(n, take):
    """Up to ``take`` row numbers spread evenly over ``n`` rows."""
    if n <= take:
        return np.arange(n)
    return np.linspace(0, n - 1, take).astype(np.int64)


def _finite32(rows):
    """Rows as float32, those with a value that is not a finite float32
    left out (the split reports them)."""
    with np.errstate(over="ignore", invalid="ignore"):
        rows = np.asarray(rows).astype(np.float32)
    return rows[np.isfinite(rows).all(axis=1)]


def _point_sample(block, take):
    return _finite32(np.asarray(block)[_evenly(len(block), take)])


def _box_sample(mins, maxs, take):
    at = _evenly(len(mins), take)
    lo, hi = np.asarray(mins)[at].astype(np.float64), np.asarray(maxs)[at].astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _finite32((lo + hi) * 0.5)


def _cuts(samples, count):
    return [c.tolist() for c in _broadphase._region_cuts(np.concatenate(samples), count)]


_ROW = re.compile(r"^(point|box) (\d+): ")


def _at_global_row(error, start):
    """``error`` (naming a row of a chunk) naming the row of the whole
    input instead."""
    message = str(error)
    found = _ROW.match(message)
    if found is None:
        return error
    local = int(found.group(2))
    row = local + start
    rest = message[found.end() :].replace(f"[{local}, ", f"[{row}, ")
    return ValueError(f"{found.group(1)} {row}: {rest}")


def _grouped(regions, rows, count):
    """``rows`` (one per entry of ``regions``) grouped by region: the
    order that groups them, and where each region's run starts."""
    order = np.argsort(regions, kind="stable")
    return rows[order], np.searchsorted(regions[order], np.arange(count + 1))


def _split_points(block, start, cuts, r, periodic, count):
    """One chunk's points, sent to their home and halo regions: per region
    the global ids, the float32 points the search runs on, and which of
    them are at home there."""
    block = np.asarray(block)
    try:
        home, indptr, regions = _broadphase._point_regions(block, cuts, r, periodic)
    except ValueError as e:
        raise _at_global_row(e, start) from None
    # float64 rounds to the nearest float32, exactly as the search rounds.
    points = block.astype(np.float32)
    rows = np.repeat(np.arange(len(block)), np.diff(indptr))
    rows, at = _grouped(regions, rows, count)
    pieces = []
    for k in range(count):
        mine = rows[at[k] : at[k + 1]]
        pieces.append((mine + start, points[mine], home[mine] == k))
    return tuple(pieces)


def _split_boxes(mins, maxs, start, cuts, count):
    """One chunk's boxes, sent to every region each overlaps: per region
    the global ids and the corners as given."""
    mins, maxs = np.asarray(mins), np.asarray(maxs)
    try:
        _, indptr, regions = _broadphase._box_regions(mins, maxs, cuts)
    except ValueError as e:
        raise _at_global_row(e, start) from None
    rows = np.repeat(np.arange(len(mins)), np.diff(indptr))
    rows, at = _grouped(regions, rows, count)
    pieces = []
    for k in range(count):
        mine = rows[at[k] : at[k + 1]]
        pieces.append((mine + start, mins[mine], maxs[mine]))
    return tuple(pieces)


def _by_output_chunk(first, second, starts):
    """Pairs ``(first, second)`` split by the input chunk holding
    ``first``: one piece per chunk."""
    chunk = np.searchsorted(np.asarray(starts), first, side="right") - 1
    order = np.argsort(chunk, kind="stable")
    first, second, chunk = first[order], second[order], chunk[order]
    at = np.searchsorted(chunk, np.arange(len(starts) + 1))
    return tuple((first[at[c] : at[c + 1]], second[at[c] : at[c + 1]]) for c in range(len(starts)))


def _kept(a, b, keep):
    """The pairs ``(a, b)`` that ``keep`` marks, as ``(low, high)``."""
    return np.minimum(a, b)[keep], np.maximum(a, b)[keep]


def _owned_point_pairs(pieces, cuts, r, periodic, starts, both_ways):
    """One region: the single-machine search over what it was sent, the
    pairs whose lower-index point is at home here, split by output chunk
    (each pair in both directions for neighbor lists). ``cuts`` is not
    needed: the split marked which points are at home."""
    ids = np.concatenate([p[0] for p in pieces]).astype(np.int64)
    points = np.concatenate([p[1] for p in pieces])
    home = np.concatenate([p[2] for p in pieces])
    local = _neighbor_pairs(points, r, periodic=periodic).astype(np.int64)
    a, b = ids[local[:, 0]], ids[local[:, 1]]
    low, high = _kept(a, b, home[np.where(a < b, local[:, 0], local[:, 1])])
    if both_ways:
        low, high = np.concatenate([low, high]), np.concatenate([high, low])
    return _by_output_chunk(low, high, starts)


def _owned_box_pairs(pieces, cuts, region, starts):
    """One region: the single-machine search over the boxes it was sent,
    the pairs whose intersection's low corner lies here, split by output
    chunk."""
    ids = np.concatenate([p[0] for p in pieces]).astype(np.int64)
    mins = np.concatenate([p[1] for p in pieces])
    maxs = np.concatenate([p[2] for p in pieces])
    local = _overlap_pairs(mins, maxs)
    keep = _broadphase._box_pair_owners(mins, maxs, local, cuts) == region
    low, high = _kept(ids[local[:, 0]], ids[local[:, 1]], keep)
    return _by_output_chunk(low, high, starts)


def _sorted_rows(pieces):
    """The pieces' pairs together, ordered by ``(first, second)``."""
    first = np.concatenate([p[0] for p in pieces]).astype(np.uint64)
    second = np.concatenate([p[1] for p in pieces]).astype(np.uint64)
    if len(first) and max(first.max(), second.max()) >= 2**32:
        order = np.lexsort((second, first))
        return first[order], second[order]
    key = np.sort((first << np.uint64(32)) | second)
    return key >> np.uint64(32), key & np.uint64(2**32 - 1)


def _sorted_pairs(pieces, dtype):
    first, second = _sorted_rows(pieces)
    return np.stack([first, second], axis=1).astype(dtype)


def _entry_count(rows):
    return len(rows[1])


def _offsets(counts):
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).tolist()


def _indptr_piece(rows, offsets, chunk):
    """The chunk's part of ``indptr``: where each of its rows ends (and,
    for the first chunk, the leading 0)."""
    ends = offsets[chunk] + np.cumsum(rows[0], dtype=np.int64)
    return np.concatenate([[0], ends]) if chunk == 0 else ends


def _csr_rows(pieces, start, size):
    """One output chunk of neighbor lists: each row's count and the rows'
    entries, each row ascending."""
    rows, entries = _sorted_rows(pieces)
    counts = np.bincount((rows - np.uint64(start)).astype(np.int64), minlength=size)
    return counts.astype(np.int64), entries.astype(np.int64)
