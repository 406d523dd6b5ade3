"""Benchmark of the ALS spectrum at typical rows: run as `python benchmarks/theory_rows.py [ROWS]`.

Scans ROWS (default 1000) random rows of `flights` (p = 2) x 41 eps in [0, 4] x both directions at
r = 1200 with `als_log_delta`, one row at a time (vectorised over eps), and prints the median and
largest time per (row, eps) point (wall clock, and CPU time of this process: on a shared machine the
wall clock also counts the time other jobs hold the core), the number of non-finite values other than the exact zeros of
a bounded reverse loss (must be 0), the number of -inf (exact zeros) and of warnings (fallback
quadrature included). A last line times one call vectorised over all rows and eps.
Everything is measured in this run; nothing is hard-coded.
"""

from __future__ import annotations

import platform
import sys
import time
import warnings

import numpy as np

from ndis.experiments.datasets import flights
from ndis.theory.als import als_log_delta
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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
