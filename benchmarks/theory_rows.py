"""Benchmarks of the ALS spectrum over rows: `python benchmarks/theory_rows.py [ROWS]` or
`python benchmarks/theory_rows.py --all-rows`.

Scans ROWS (default 1000) random rows of `flights` (p = 2) x 41 eps in [0, 4] x both directions at
r = 1200 with `als_log_delta`, one row at a time (vectorised over eps), and prints the median and
largest time per (row, eps) point (wall clock, and CPU time of this process: on a shared machine the
wall clock also counts the time other jobs hold the core), the number of non-finite values other than the exact zeros of
a bounded reverse loss (must be 0), the number of -inf (exact zeros) and of warnings (fallback
quadrature included). A last line times one call vectorised over all rows and eps.

--all-rows: the acceptance case `ndis theory als --param r=1200 --data flights --rows all --eps 0.5,1,2`,
side by side in one run: the full scan (every row evaluated, `theory.spectrum._scan` without ceilings),
the pruned scan (`theory.spectrum(..., rows="all")`: only the rows whose Chernoff ceiling can reach the
maximum) and the command itself in a fresh process (imports, data, plot and files included); wall
clock and CPU time, the worst rows and whether the two curves are equal bit for bit.
Everything is measured in this run; nothing is hard-coded.
"""

from __future__ import annotations

import argparse
import platform
import resource
import subprocess
import tempfile
import time
import warnings

import numpy as np

from ndis import theory
from ndis.experiments.datasets import flights
from ndis.theory.als import als_delta, als_log_delta
from ndis.theory.spectrum import _scan
from ndis.theory.worst_rows import leverage_residual

R, P = 1200, 2


def main(rows: int = 1000, seed: int = 0) -> None:
    lev, res = leverage_residual(flights())
    chosen = np.random.default_rng(seed).choice(lev.size, rows, replace=False)
    eps = np.linspace(0.0, 4.0, 41)
    print(f"flights: {lev.size} rows; {rows} random rows (seed {seed}) x {eps.size} eps in [0, 4] x 2 directions, "
          f"r = {R}, p = {P}; {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"leverage of the chosen rows: median {np.median(lev[chosen]):.3g}, residual share: median {np.median(res[chosen]):.3g}")
    for direction in ("forward", "reverse"):
        per_point, cpu_per_point, nan, zeros = [], [], 0, 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in chosen:
                started, cpu = time.perf_counter(), time.process_time()
                values = als_log_delta(eps, lev[i], res[i], R, P, direction)
                per_point.append((time.perf_counter() - started) / eps.size)
                cpu_per_point.append((time.process_time() - cpu) / eps.size)
                nan += int(np.sum(np.isnan(values) | (values == np.inf)))
                zeros += int(np.sum(values == -np.inf))
        fallbacks = sum("fallback" in str(w.message) for w in caught)
        print(f"{direction:8s} time per point: median {1e3 * np.median(per_point):.3f} ms, max {1e3 * np.max(per_point):.3f} ms "
              f"(CPU: median {1e3 * np.median(cpu_per_point):.3f} ms, max {1e3 * np.max(cpu_per_point):.3f} ms); "
              f"non-finite (NaN/+inf) {nan}, exact zeros (-inf) {zeros}, warnings {len(caught)} (fallback {fallbacks})")
        started = time.perf_counter()
        values = als_log_delta(eps[None, :], lev[chosen, None], res[chosen, None], R, P, direction)
        elapsed = time.perf_counter() - started
        print(f"{direction:8s} vectorised over all {values.size} points: {elapsed:.2f} s ({1e3 * elapsed / values.size:.3f} ms per point)")


def _timed(function):
    """(result, wall seconds, CPU seconds of this process) of function()."""
    started, cpu = time.perf_counter(), time.process_time()
    result = function()
    return result, time.perf_counter() - started, time.process_time() - cpu


def all_rows(eps=(0.5, 1.0, 2.0)) -> None:
    """The full scan and the pruned scan of every flights row at r = R, and the command, side by side."""
    eps = np.asarray(eps, dtype=float)
    D = flights()
    lev, res = leverage_residual(D)
    p = D.shape[1] - 1
    curves = lambda block: tuple(als_delta(eps[None, :], lev[block, None], res[block, None], R, p, d)
                                 for d in ("forward", "reverse"))
    print(f"flights: {lev.size} rows x eps {eps.tolist()}, r = {R}; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    (forward, reverse, row), full_wall, full_cpu = _timed(lambda: _scan(eps, np.arange(lev.size), curves))
    pruned, pruned_wall, pruned_cpu = _timed(lambda: theory.spectrum("als", D, eps, rows="all", r=R))
    same = (np.array_equal(pruned.forward, forward) and np.array_equal(pruned.reverse, reverse)
            and np.array_equal(pruned.row, row))
    print(f"full scan   {full_wall:7.2f} s wall, {full_cpu:7.2f} s CPU; worst rows {row.tolist()}, "
          f"delta {np.maximum(forward, reverse).tolist()}")
    print(f"pruned scan {pruned_wall:7.2f} s wall, {pruned_cpu:7.2f} s CPU; worst rows {pruned.row.tolist()}, "
          f"delta {pruned.delta.tolist()}")
    print(f"same rows and curves bit for bit: {same}; speed-up {full_wall / pruned_wall:.1f}x wall, "
          f"{full_cpu / pruned_cpu:.1f}x CPU")
    command = ["ndis", "theory", "als", "--param", f"r={R}", "--data", "flights", "--rows", "all",
               "--eps", ",".join(f"{e:g}" for e in eps)]
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        _, wall, _ = _timed(lambda: subprocess.run([*command, "--out", out], check=True, capture_output=True))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"`{' '.join(command)}`: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {after.ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="?", type=int, default=1000, metavar="ROWS", help="random rows (default 1000)")
    parser.add_argument("--all-rows", action="store_true", help="the acceptance case, every row (module docstring)")
    args = parser.parse_args()
    if args.all_rows:
        all_rows()
    else:
        main(args.rows)
