"""broadphase.dask on a two-worker local cluster against the single-machine
call and scipy's cKDTree: wall time, peak memory per worker process and
bytes moved between workers, for neighbor pairs of uniform points.

    python bench_dask.py                    # 10M points, ~30 neighbors each
    python bench_dask.py --points 2000000   # smaller
    python bench_dask.py --smoke            # a tiny run that checks the answers

Every run checks that the cluster's pairs equal the single-machine call's.
The points are generated on the workers (dask's seeded generator) and
computed again on the client for the single-machine calls.
"""

import argparse
import math
import resource
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import broadphase as bp
import broadphase.dask as bpd


def peak_rss_mib():
    """This process's peak resident memory so far, MiB (Linux: KiB units)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bytes_received(dask_worker):
    """Bytes this worker fetched from other workers so far."""
    return sum(entry["total"] for entry in dask_worker.transfer_incoming_log)


def radius_for(points, neighbors):
    """The radius at which uniform points in the unit cube have about
    `neighbors` neighbors each."""
    return (neighbors / (points * 4.0 / 3.0 * math.pi)) ** (1.0 / 3.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=10_000_000)
    parser.add_argument("--neighbors", type=float, default=30.0)
    parser.add_argument("--chunks", type=int, default=16, help="row chunks of the input")
    parser.add_argument("--regions", type=int, default=None, help="regions (default: per chunk)")
    parser.add_argument("--no-ckdtree", action="store_true", help="skip scipy's cKDTree")
    parser.add_argument("--smoke", action="store_true", help="20,000 points, a quick check")
    args = parser.parse_args()
    if args.smoke:
        args.points, args.chunks = 20_000, 4

    n, r = args.points, radius_for(args.points, args.neighbors)
    x = da.random.default_rng(0).random((n, 3), chunks=(-(-n // args.chunks), 3), dtype=np.float32)
    print(f"{n:,} points, r = {r:.6g} (~{args.neighbors:g} neighbors each), {args.chunks} chunks")
    rows = []

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster, Client(cluster) as client:
        before = client.run(peak_rss_mib)
        start = time.perf_counter()
        pairs = client.compute(bpd.neighbor_pairs(x, r, regions=args.regions), sync=True)
        took = time.perf_counter() - start
        peaks = client.run(peak_rss_mib)
        moved = sum(client.run(bytes_received).values())
        peak = ", ".join(f"{peaks[w]:.0f} (start {before[w]:.0f})" for w in sorted(peaks))
        rows.append(("broadphase.dask, 2 workers", took, len(pairs)))
        print(f"  peak memory per worker, MiB: {peak}")
        print(f"  bytes moved between workers: {moved / 2**20:.1f} MiB")

    points = x.compute(scheduler="synchronous")
    start = time.perf_counter()
    single = bp.neighbor_pairs(points, r, threads=2, sort=True)
    rows.append(("broadphase.neighbor_pairs, 2 threads, sorted", time.perf_counter() - start, len(single)))
    if not np.array_equal(pairs, single):
        raise SystemExit("the cluster's pairs differ from the single-machine call's")

    if not args.no_ckdtree:
        from scipy.spatial import cKDTree

        start = time.perf_counter()
        tree_pairs = cKDTree(points).query_pairs(r, output_type="ndarray")
        rows.append(("scipy cKDTree build + query_pairs", time.perf_counter() - start, len(tree_pairs)))

    print(f"  client peak memory, MiB: {peak_rss_mib():.0f}")
    for name, seconds, count in rows:
        print(f"  {name:<46} {seconds:8.3f} s  {count:,} pairs")


if __name__ == "__main__":
    main()
