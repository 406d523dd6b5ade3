"""Benchmark of the exact privacy spectrum (issue 2): run as `python benchmarks/theory.py`.

(a) time of a 1000-point eps grid on a 13-dimensional pair with different means and covariances
    (target <= 1 s; median of a few repetitions);
(b) exact method vs the NDIS Monte-Carlo estimator at matched accuracy: Hoeffding radius 1e-3 at 99%
    confidence, n = ceil(ln(2/0.01) / (2 * 1e-3^2)) = 2,649,159 samples, on a 200-point grid
    (target: exact >= 100x faster), with the largest |delta_mc - delta| as a sanity line.
(c) time of a 1000-point eps grid on a 500-dimensional pair (500 distinct privacy-loss weights: the
    shared-contour path of GaussianPair; target < 1 s).
Everything is measured in this run; nothing is hard-coded.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time

import numpy as np


from ndis.theory.gaussian_pair import GaussianPair


def thirteen_dim_pair(seed: int = 13) -> GaussianPair:
    """A 13-dimensional pair with different means and covariances (eigenvalues in [e^-0.5, e^0.5])."""
    rng = np.random.default_rng(seed)
    d = 13

    def cov():
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        return (Q * np.exp(rng.uniform(-0.5, 0.5, d))) @ Q.T

    return GaussianPair(0.3 * rng.standard_normal(d), cov(), 0.3 * rng.standard_normal(d), cov())


def p500_pair(seed: int = 500) -> GaussianPair:
    """A 500-dimensional pair: random rotations, covariance eigenvalues in [e^-0.1, e^0.1], mean shift ~0.05."""
    rng = np.random.default_rng(seed)
    d = 500
    mean1, mean2 = 0.05 * rng.standard_normal(d), 0.05 * rng.standard_normal(d)

    def cov():
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        return (Q * np.exp(rng.uniform(-0.1, 0.1, d))) @ Q.T

    return GaussianPair(mean1, cov(), mean2, cov())


def timed(function, repeats: int):
    """Median wall time, all wall times, median CPU time of this process, last result. The CPU time
    is the fair measure on a shared machine (other jobs inflate wall time, not process time)."""
    walls, cpus = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return statistics.median(walls), walls, statistics.median(cpus), result


def main() -> None:
    pair = thirteen_dim_pair()
    print(f"theory benchmark - python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}, {__import__('os').cpu_count()} cpus")
    print(f"pair: d = 13, means and covariances differ; privacy-loss terms = {pair.loss.weight.shape[1]}")

    # (a) 1000-point grid
    grid = np.linspace(0.0, 10.0, 1000)
    pair.log_delta(grid[:10])                          # warm-up (imports, caches)
    median_a, times_a, cpu_a, curve = timed(lambda: pair.delta(grid), repeats=5)
    print()
    print("(a) exact delta on a 1000-point eps grid in [0, 10]")
    print(f"    wall times: {', '.join(f'{t:.3f}' for t in times_a)} s")
    print(f"    median: {median_a:.3f} s wall, {cpu_a:.3f} s CPU   (target <= 1 s: {'met' if median_a <= 1.0 else 'NOT met'})")
    print(f"    delta range on the grid: {curve.min():.3e} .. {curve.max():.3e}")

    # (b) exact vs Monte Carlo at matched accuracy on a 200-point grid
    radius_target, gamma = 1e-3, 0.01
    n = math.ceil(math.log(2 / gamma) / (2 * radius_target**2))
    grid_b = np.linspace(0.0, 4.0, 200)
    median_exact, _, cpu_exact, exact = timed(lambda: pair.delta(grid_b), repeats=5)
    start, start_cpu = time.perf_counter(), time.process_time()
    estimate, radius = pair.delta_mc(grid_b, n, seed=0, confidence=1 - gamma)
    time_mc, cpu_mc = time.perf_counter() - start, time.process_time() - start_cpu
    error = np.abs(estimate - exact)
    print()
    print(f"(b) 200-point eps grid in [0, 4]: exact vs Monte Carlo with n = {n:,} samples "
          f"(Hoeffding radius {radius:.2e} at {100 * (1 - gamma):.0f}% confidence)")
    print(f"    {'method':<14}{'wall [s]':>12}{'CPU [s]':>12}{'wall per eps [ms]':>20}")
    print(f"    {'exact':<14}{median_exact:>12.4f}{cpu_exact:>12.4f}{1e3 * median_exact / grid_b.size:>20.3f}")
    print(f"    {'Monte Carlo':<14}{time_mc:>12.3f}{cpu_mc:>12.3f}{1e3 * time_mc / grid_b.size:>20.3f}")
    ratio = time_mc / median_exact
    ratio_cpu = cpu_mc / cpu_exact
    print(f"    speed ratio (MC / exact): {ratio:,.0f}x wall, {ratio_cpu:,.0f}x CPU   "
          f"(target >= 100x: {'met' if min(ratio, ratio_cpu) >= 100 else 'NOT met'})")
    print(f"    sanity: max |delta_mc - delta| = {error.max():.2e} (radius {radius:.2e}; "
          f"{'within' if error.max() <= radius else 'OUTSIDE'} the radius), at eps = {grid_b[np.argmax(error)]:.3f}")
    # (c) p = 500
    big = p500_pair()
    start = time.perf_counter()
    big.delta(grid)
    first = time.perf_counter() - start
    median_c, _, cpu_c, _ = timed(lambda: big.delta(grid), repeats=3)
    print()
    print(f"(c) p = 500 pair ({big.loss.weight.shape[1]} privacy-loss terms), 1000-point eps grid in [0, 10]")
    print(f"    first grid {first:.3f} s (with the real-axis table), then median {median_c:.3f} s wall, {cpu_c:.3f} s CPU "
          f"(target < 1 s: {'met' if first < 1.0 else 'NOT met'})")
    print()
    print("summary")
    print(f"    1000-point grid, d = 13: {median_a:.3f} s wall / {cpu_a:.3f} s CPU (target 1 s)")
    print(f"    exact is {ratio:,.0f}x (wall) / {ratio_cpu:,.0f}x (CPU) faster than Monte Carlo at radius 1e-3 / 99% (target 100x)")
    print(f"    1000-point grid, p = 500: {first:.3f} s first, {median_c:.3f} s later (target 1 s)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
