"""Benchmarks of the broadphase Python package against scipy's cKDTree,
rtree and shapely's STRtree, and of what the Python layer adds to a call.

    python bench.py                      # every size, 10k to 1M
    python bench.py --quick              # 10k and 100k only (about a minute)
    python bench.py --out results.md --png results.png

Each row times whole calls from numpy arrays to numpy results: building
whatever index the library needs and answering, unless a column says it
times one part. Every answer is checked against ours before it is timed
(the same pair set; at 1M points the pair count). One thread unless a
column says otherwise. Times are medians of the repeats.
"""

import argparse
import datetime
import gc
import os
import platform
import statistics
import sys
import time

# numpy's BLAS threads spin after use and would compete with the timed
# code on a small machine; nothing here uses BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import rtree  # noqa: E402
import scipy  # noqa: E402
import shapely  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402

import broadphase as bp  # noqa: E402

F32 = np.float32


def timed(call, repeats):
    """Median seconds of `repeats` calls, and the last call's result. The
    previous result is freed before each call, so freeing it is not timed."""
    times, result = [], None
    for _ in range(repeats):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def sorted_pairs(pairs):
    pairs = np.asarray(pairs)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def ms(seconds):
    return f"{seconds * 1e3:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def ratio(theirs, ours):
    return f"{theirs / ours:,.1f}×"


# ----- data -----


def points_for(n, rng, neighbors=30):
    """n uniform points in the unit cube, and the radius that gives each
    about `neighbors` neighbors (4/3·π·r³·n = neighbors)."""
    points = rng.random((n, 3)).astype(F32)
    r = float(F32((neighbors / (4 / 3 * np.pi * n)) ** (1 / 3)))
    return points, r


def boxes_for(n, rng, dims):
    """n boxes of sides 0.5 to 1.5 at a density that gives each about four
    overlaps, float32 values (exact in float64 for the peers)."""
    side = (n / (0.5 if dims == 3 else 1.0)) ** (1 / dims)
    centers = rng.random((n, dims)) * side
    half = (0.5 + rng.random((n, dims))) / 2
    return (centers - half).astype(F32), (centers + half).astype(F32)


# ----- the runs -----


def bench_neighbor_pairs(n, rng, repeats, rows):
    points, r = points_for(n, rng)
    p64 = points.astype(np.float64)
    ours, pairs = timed(lambda: bp.neighbor_pairs(points, r), repeats)
    ours_sorted, _ = timed(lambda: bp.neighbor_pairs(points, r, sort=True), repeats)
    ours_all, _ = timed(lambda: bp.neighbor_pairs(points, r, threads=0), repeats)
    build, tree = timed(lambda: cKDTree(p64), repeats)
    query, theirs = timed(lambda: tree.query_pairs(r, output_type="ndarray"), repeats)
    # The sets agree but for pairs whose float64 distance lies within
    # float32 rounding of r, where the float32 rule decides for us and the
    # float64 one for cKDTree.
    key_ours = pairs[:, 0].astype(np.int64) * n + pairs[:, 1]
    key_theirs = np.minimum(theirs[:, 0], theirs[:, 1]) * n + np.maximum(theirs[:, 0], theirs[:, 1])
    differ = np.setxor1d(key_ours, key_theirs)
    gap = np.linalg.norm(p64[differ // n] - p64[differ % n], axis=1) - r
    assert np.all(np.abs(gap) <= 5e-7 * r), "cKDTree disagrees beyond float32 rounding"
    rows.append(
        {
            "n": n,
            "pairs": len(pairs),
            "differ": len(differ),
            "ours": ours,
            "ours sorted": ours_sorted,
            "ours all cores": ours_all,
            "cKDTree build": build,
            "cKDTree query_pairs": query,
        }
    )


def bench_neighbor_lists(n, rng, repeats, rows, ball_point):
    points, r = points_for(n, rng)
    p64 = points.astype(np.float64)
    ours, (indptr, indices) = timed(lambda: bp.neighbor_lists(points, r), repeats)
    ours_all, _ = timed(lambda: bp.neighbor_lists(points, r, threads=0), repeats)
    row = {"n": n, "entries": len(indices), "ours": ours, "ours all cores": ours_all}
    if ball_point:
        tree = cKDTree(p64)
        for workers in (1, -1):
            t, balls = timed(
                lambda: tree.query_ball_point(p64, r, workers=workers, return_sorted=True), 1
            )
            row[f"query_ball_point workers={workers}"] = t
        for i in range(0, n, max(1, n // 500)):  # a sample of rows
            got = indices[indptr[i] : indptr[i + 1]]
            assert np.array_equal(got, [j for j in balls[i] if j != i]), "cKDTree disagrees"
        del balls
    rows.append(row)


def bench_boxes(n, rng, repeats, rows, with_rtree):
    lo, hi = boxes_for(n, rng, 3)
    ours, pairs = timed(lambda: bp.overlap_pairs(lo, hi), repeats)
    ours_all, _ = timed(lambda: bp.overlap_pairs(lo, hi, threads=0), repeats)
    row = {"n": n, "pairs": len(pairs), "ours": ours, "ours all cores": ours_all}
    if with_rtree:
        lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)
        props = rtree.index.Property(dimension=3)
        load, idx = timed(
            lambda: rtree.index.Index((np.arange(n), lo64, hi64), properties=props), 1
        )

        def per_box():
            found = []
            for i in range(n):
                for j in idx.intersection((*lo64[i], *hi64[i])):
                    if j > i:
                        found.append((i, j))
            return np.array(found, dtype=np.int64).reshape(-1, 2)

        query, theirs = timed(per_box, 1)
        assert np.array_equal(sorted_pairs(theirs), sorted_pairs(pairs)), "rtree disagrees"
        row["rtree bulk load"] = load
        row["rtree per-box queries"] = query
    rows.append(row)


def bench_boxes_2d(n, rng, repeats, rows):
    lo, hi = boxes_for(n, rng, 2)
    ours, pairs = timed(lambda: bp.overlap_pairs(lo, hi), repeats)
    lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)

    def strtree():
        geoms = shapely.box(lo64[:, 0], lo64[:, 1], hi64[:, 0], hi64[:, 1])
        tree = shapely.STRtree(geoms)
        return tree.query(geoms, predicate="intersects")

    theirs_t, found = timed(strtree, repeats)
    geoms = shapely.box(lo64[:, 0], lo64[:, 1], hi64[:, 0], hi64[:, 1])
    tree = shapely.STRtree(geoms)
    query_t, _ = timed(lambda: tree.query(geoms, predicate="intersects"), repeats)
    keep = found[0] < found[1]
    assert np.array_equal(sorted_pairs(found[:, keep].T), sorted_pairs(pairs)), "STRtree disagrees"
    rows.append(
        {"n": n, "pairs": len(pairs), "ours": ours, "STRtree": theirs_t, "STRtree query": query_t}
    )


def bench_overhead(n, rng, rounds):
    """The Python call against the same Rust work timed inside Rust, one of
    each per round so that both see the same machine; medians and minima
    over the rounds."""
    lo, hi = boxes_for(n, rng, 3)
    bp.overlap_pairs(lo, hi, sort=True)  # warm
    calls, inner = [], []

    def python_call():
        # Sorted, as the Rust side times the search and then the sort.
        start = time.perf_counter()
        pairs = bp.overlap_pairs(lo, hi, sort=True)
        calls.append(time.perf_counter() - start)
        del pairs

    def rust_call():
        (find,), (sort,) = bp._broadphase._time_overlap_pairs(lo, hi, 1)
        inner.append((find, sort))

    for k in range(rounds):
        # Alternating which goes first, so neither always finds the
        # caches as the other left them.
        for run in (python_call, rust_call) if k % 2 else (rust_call, python_call):
            run()
    totals = [f + s for f, s in inner]
    return {
        "median": (statistics.median(calls), statistics.median(totals)),
        "min": (min(calls), min(totals)),
        "find": statistics.median(f for f, _ in inner),
        "sort": statistics.median(s for _, s in inner),
    }


# ----- report -----


def table(rows, columns, compare=None):
    """A markdown table of `rows` (dicts); `compare` adds 'theirs ÷ ours'
    columns for each (theirs, ours) pair of columns."""
    compare = compare or []
    head = columns + [f"{a} ÷ {b}" for a, b in compare]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        cells = []
        for c in columns:
            v = row.get(c)
            if v is None:
                cells.append("–")
            elif isinstance(v, float):
                cells.append(ms(v))
            else:
                cells.append(f"{v:,}")
        for a, b in compare:
            parts = a.split(" + ")
            theirs = sum(row[x] for x in parts) if all(x in row for x in parts) else None
            cells.append(ratio(theirs, row[b]) if theirs else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def overhead_rows(overhead):
    lines = []
    for which in ("median", "min"):
        call, inner = overhead[which]
        lines.append(
            f"| {which} | {ms(call)} | {ms(inner)} | {ms(call - inner)} | {100 * (call - inner) / call:.1f}% |"
        )
    return "\n".join(lines)


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def plot(path, sections):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no plot written to {path}", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(sections), figsize=(5 * len(sections), 4))
    for ax, (title, rows, columns) in zip(np.atleast_1d(axes), sections):
        for c in columns:
            parts = c.split(" + ")
            have = [row for row in rows if all(x in row for x in parts)]
            if have:
                ys = [sum(row[x] for x in parts) for row in have]
                ax.loglog([row["n"] for row in have], ys, marker="o", label=c)
        ax.set_title(title)
        ax.set_xlabel("n")
        ax.set_ylabel("seconds")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k and 100k only")
    parser.add_argument("--out", help="also write the markdown report here")
    parser.add_argument("--png", help="write a plot here (needs matplotlib)")
    parser.add_argument("--repeats", type=int, default=5, help="calls per timing (1M: at most 3)")
    args = parser.parse_args()

    load_at_start = f"{os.getloadavg()[0]:.2f}"
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    rng = np.random.default_rng(20261126)
    pairs_rows, lists_rows, box_rows, box2_rows = [], [], [], []
    for n in sizes:
        repeats = min(args.repeats, 3) if n >= 1_000_000 else args.repeats
        print(f"n = {n:,}", file=sys.stderr)
        bench_neighbor_pairs(n, rng, repeats, pairs_rows)
        bench_neighbor_lists(n, rng, repeats, lists_rows, ball_point=True)
        bench_boxes(n, rng, repeats, box_rows, with_rtree=True)
        bench_boxes_2d(n, rng, repeats, box2_rows)
    overhead_n = 100_000
    overhead = bench_overhead(overhead_n, rng, 41)

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    versions = (
        f"broadphase {bp.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"rtree {rtree.__version__}, shapely {shapely.__version__}, Python {platform.python_version()}"
    )
    report = f"""## Python benchmarks — {now}

Command: `python bench.py {" ".join(sys.argv[1:])}`, {machine()}; {versions}.
Load average at the start: {load_at_start}; at the end: {os.getloadavg()[0]:.2f} (other work on the machine shows here).
Medians of {args.repeats} calls (3 at 1M; 1 for the per-box rtree loop and query_ball_point).
"ours" is one thread; "all cores" is `threads=0`.

### Neighbor pairs: uniform points in the unit cube, about 30 neighbors each

`neighbor_pairs(points, r)` (the search's order, the default; "sorted": `sort=True`) against
`cKDTree(points)` then `query_pairs(r, output_type='ndarray')` (unsorted),
the same float32 points as float64. "differ": pairs in one answer only, each
checked to lie within float32 rounding of r (the float32 rule of the crate
against cKDTree's float64 distances).

{table(pairs_rows, ["n", "pairs", "differ", "ours", "ours sorted", "ours all cores", "cKDTree build", "cKDTree query_pairs"],
       [("cKDTree build + cKDTree query_pairs", "ours"), ("cKDTree build + cKDTree query_pairs", "ours sorted"), ("cKDTree query_pairs", "ours")])}

### Neighbor lists (CSR)

`neighbor_lists(points, r)` (rows sorted) against `query_ball_point(points, r,
workers=..., return_sorted=True)` on a built cKDTree (lists of Python ints;
the tree's build is not timed); a sample of rows checked equal.

{table(lists_rows, ["n", "entries", "ours", "ours all cores", "query_ball_point workers=1", "query_ball_point workers=-1"],
       [("query_ball_point workers=1", "ours"), ("query_ball_point workers=-1", "ours all cores")])}

### Overlapping boxes, 3D: about four overlaps per box

`overlap_pairs(mins, maxs)` against rtree: an index bulk-loaded from the
arrays, then `intersection` queried per box in a Python loop (pairs kept
with j > i); pair sets checked equal.

{table(box_rows, ["n", "pairs", "ours", "ours all cores", "rtree bulk load", "rtree per-box queries"],
       [("rtree bulk load + rtree per-box queries", "ours"), ("rtree per-box queries", "ours")])}

### Overlapping boxes, 2D: about four overlaps per box

`overlap_pairs` on `(n, 2)` corners against shapely: `shapely.box` for each
box, `STRtree(geoms)`, `query(geoms, predicate='intersects')` ("STRtree":
all three; "STRtree query": the query alone on a built tree); pair sets
checked equal.

{table(box2_rows, ["n", "pairs", "ours", "STRtree", "STRtree query"],
       [("STRtree", "ours"), ("STRtree query", "ours")])}

### What the Python layer adds

`overlap_pairs` on {overhead_n:,} 3D boxes, timed from Python, against the same
work timed inside Rust on boxes converted once (`_time_overlap_pairs`: the
grid tree's pairs, {ms(overhead["find"])}, then the sort, {ms(overhead["sort"])}), one of each
per round over 41 rounds. The Python layer is the conversion and check of
the arrays, the job system lookup, releasing the GIL, and the result array.

| over the rounds | Python call | same work in Rust | Python layer | share of the call |
| --- | --- | --- | --- | --- |
{overhead_rows(overhead)}
"""
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    if args.png:
        plot(
            args.png,
            [
                ("neighbor pairs", pairs_rows, ["ours", "ours sorted", "cKDTree build + cKDTree query_pairs"]),
                ("boxes 3D", box_rows, ["ours", "rtree bulk load + rtree per-box queries"]),
                ("boxes 2D", box2_rows, ["ours", "STRtree"]),
            ],
        )


if __name__ == "__main__":
    main()
