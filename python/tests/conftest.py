"""Brute-force oracles in numpy, written to the crate's exact rules, and
the hostile inputs the tests share."""

import numpy as np

F32 = np.float32


def as_pairs(i, j):
    """Sorted (m, 2) uint32 rows from index arrays."""
    pairs = np.stack([np.asarray(i), np.asarray(j)], axis=1).astype(np.uint32)
    if len(pairs) == 0:
        return np.zeros((0, 2), dtype=np.uint32)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def sort_rows(pairs):
    """The rows of an (m, 2) array in (i, j) order."""
    pairs = np.asarray(pairs)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))] if len(pairs) else pairs


def outward(mins, maxs):
    """Box corners as the package rounds them to float32: mins down, maxs up."""
    lo = np.asarray(mins).astype(F32)
    hi = np.asarray(maxs).astype(F32)
    if np.asarray(mins).dtype == np.float64:
        lo = np.where(lo.astype(np.float64) > mins, np.nextafter(lo, F32(-np.inf)), lo)
    if np.asarray(maxs).dtype == np.float64:
        hi = np.where(hi.astype(np.float64) < maxs, np.nextafter(hi, F32(np.inf)), hi)
    return lo, hi


def brute_overlap(mins, maxs):
    """Every pair i < j of boxes that overlap, faces included (any columns)."""
    mins, maxs = np.asarray(mins), np.asarray(maxs)

    def hits(rows):
        a_lo, a_hi = mins[rows, None, :], maxs[rows, None, :]
        return np.all((a_lo <= maxs[None]) & (mins[None] <= a_hi), axis=2)

    return upper_pairs(len(mins), hits)


def upper_pairs(n, hits):
    """The pairs i < j where `hits(rows)` (a boolean matrix, rows `rows`
    against all n columns) is true, computed 256 rows at a time."""
    found_i, found_j = [], []
    for start in range(0, n, 256):
        i, j = np.nonzero(hits(slice(start, start + 256)))
        i = i + start
        keep = i < j
        found_i.append(i[keep])
        found_j.append(j[keep])
    if not found_i:
        return np.zeros((0, 2), dtype=np.uint32)
    return as_pairs(np.concatenate(found_i), np.concatenate(found_j))


def brute_query(mins, maxs, qmins, qmaxs):
    """CSR rows of the boxes each query box overlaps, ascending."""
    rows = []
    for lo, hi in zip(qmins, qmaxs):
        rows.append(np.nonzero(np.all((lo <= maxs) & (mins <= hi), axis=1))[0])
    return rows


def squared_distances(a, b, periodic=None):
    """Squared distances between every row of a and every row of b, in
    float32, as the crate computes them: per axis a - b (through the
    nearest image on wrapping axes), then dx*dx + dy*dy + dz*dz from left
    to right."""
    with np.errstate(over="ignore"):
        d = a[:, None, :].astype(F32) - b[None, :, :].astype(F32)
    return squared_offsets(d, periodic)


def pair_squared_distances(a, b, periodic=None):
    """squared_distances between row k of a and row k of b, for each k."""
    return squared_offsets(a.astype(F32) - b.astype(F32), periodic)


def squared_offsets(d, periodic=None):
    """The squared lengths of offsets d (float32, last axis the columns)."""
    if periodic is not None:
        lo, hi, wrap = periodic
        for axis in range(d.shape[-1]):
            if wrap[axis]:
                length = F32(hi[axis]) - F32(lo[axis])
                half = length * F32(0.5)
                x = d[..., axis]
                d[..., axis] = np.where(x > half, x - length, np.where(x < -half, x + length, x))
    with np.errstate(over="ignore"):
        total = d[..., 0] * d[..., 0]
        for axis in range(1, d.shape[-1]):
            total = total + d[..., axis] * d[..., axis]
    return total


def brute_neighbors(points, r, periodic=None):
    """Every pair i < j within r (inclusive, float32 rule)."""
    p = np.asarray(points).astype(F32)
    r2 = F32(r) * F32(r)
    return upper_pairs(len(p), lambda rows: squared_distances(p[rows], p, periodic) <= r2)


def pairs_to_rows(pairs, n):
    """Symmetric neighbor rows, each ascending, from pairs."""
    rows = [[] for _ in range(n)]
    for i, j in pairs:
        rows[i].append(j)
        rows[j].append(i)
    return [np.array(sorted(r), dtype=np.int64) for r in rows]


def csr_rows(indptr, indices):
    """The rows of a CSR table as a list of arrays."""
    return [indices[indptr[k] : indptr[k + 1]] for k in range(len(indptr) - 1)]


def ray_entries(origins, dirs, max_t, mins, maxs):
    """Where each ray enters each box (inf where it misses), as the crate's
    exact test computes it: slabs in float64, rounded to float32."""
    o = np.asarray(origins, dtype=np.float64)[:, None, :]
    d = np.asarray(dirs, dtype=np.float64)[:, None, :]
    lo = np.asarray(mins, dtype=np.float64)[None]
    hi = np.asarray(maxs, dtype=np.float64)[None]
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = (lo - o) / d, (hi - o) / d
    moving = d != 0
    inside = (o >= lo) & (o <= hi)
    near = np.where(moving, np.minimum(a, b), np.where(inside, -np.inf, np.inf))
    far = np.where(moving, np.maximum(a, b), np.where(inside, np.inf, -np.inf))
    first = np.maximum(near.max(axis=2), 0.0)
    last = np.minimum(far.min(axis=2), np.asarray(max_t, dtype=np.float64)[:, None])
    return np.where(first <= last, first, np.inf).astype(F32)


def first_hits(origins, dirs, max_t, mins, maxs):
    """The first box each ray hits (-1 for none) and its t, ties to the
    lower index."""
    t = ray_entries(origins, dirs, max_t, mins, maxs)
    if t.shape[1] == 0:
        return np.full(len(t), -1), np.full(len(t), np.inf, dtype=F32)
    index = np.argmin(t, axis=1)  # the first of equal minima
    best = t[np.arange(len(t)), index]
    return np.where(np.isinf(best), -1, index), best


def random_boxes(rng, n, dims=3, extent=20.0, size=2.0, dtype=F32):
    """n boxes in a cube of side extent, sides up to size."""
    lo = rng.random((n, dims)) * extent
    hi = lo + rng.random((n, dims)) * size
    return lo.astype(dtype), hi.astype(dtype)


def hostile_boxes(dims=3):
    """Duplicates, boxes touching at faces, edges and corners, zero-size
    boxes (on a face, coincident), far-apart and huge coordinates."""
    unit = np.eye(dims, dtype=F32)
    lo = [
        np.zeros(dims), np.zeros(dims), np.zeros(dims),  # three identical
        unit[0], np.ones(dims), -np.ones(dims),  # face- and corner-touching
        np.full(dims, 0.5), np.full(dims, 0.5),  # two coincident points
        unit[0] * 1.0, np.full(dims, 7.0), np.full(dims, 3e38),  # point on a face, apart, huge
        np.full(dims, -3e38), np.full(dims, 1e-40),  # most negative, subnormal point
    ]
    hi = [
        np.ones(dims), np.ones(dims), np.ones(dims),
        unit[0] * 2 + np.ones(dims) - unit[0], np.full(dims, 2.0), np.zeros(dims),
        np.full(dims, 0.5), np.full(dims, 0.5),
        unit[0] * 1.0, np.full(dims, 8.0), np.full(dims, 3.4e38),
        np.full(dims, -2e38), np.full(dims, 1e-40),
    ]
    return np.array(lo, dtype=F32), np.array(hi, dtype=F32)
