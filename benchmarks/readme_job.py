"""The README's main job: its wall time per phase, and how often its scorer falls back to training.

    python benchmarks/readme_job.py [--runs 5]              # wall time, phases, plot
    python benchmarks/readme_job.py --seeds 0:120           # the normality pre-test's fallback rate

The job is the README's command, `ndis audit als --param r=10000 --data flights:20000 --eps 0:1.5:31
--out DIR` (ALS, r = 10,000, 10^6 samples per side, scorer auto), run as a whole process (`python -m
ndis`: imports, audit, report files, exit) with `--verbose`, which prints the wall time of every phase
(`report.info["timings"]`, the imports before it, the plot and the other report files after it).

`--runs N` runs it N times without a seed, as the README does, and prints each run's wall time, its
scorer and its phases, then the median wall time, the median of every phase and the median plot time
(drawing and rendering spectrum.png, the matplotlib import included), and the load average.
`--seeds A:B` runs it with `--seed A`, ..., `--seed B-1` and counts the runs whose scorer is not the
Gaussian plug-in: those where the normality pre-test (`auditor.scoring.selection`) rejected and every
candidate was trained (torch and scikit-learn imported); it prints their share with its 95%
Clopper-Pearson interval, the largest distance of delta-hat(0) from theory's 0.1859 over the seeds, and
in how many runs theory's curve lies inside the band [lower, upper] on the whole grid.
Set OPENBLAS_NUM_THREADS=1 yourself (it is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy.special import betaincinv

JOB = ["audit", "als", "--param", "r=10000", "--data", "flights:20000", "--eps", "0:1.5:31"]
PLUG_IN = "gaussian/mechanism"


def run(out: Path, seed: int | None) -> tuple[float, dict, dict]:
    """(wall seconds, {phase: seconds}, report.json) of one run of the job writing to `out`."""
    command = [sys.executable, "-m", "ndis", *JOB, "--out", str(out), "--verbose"]
    command += [] if seed is None else ["--seed", str(seed)]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=out.parent)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    line = next(line for line in result.stdout.splitlines() if line.startswith("timings"))
    phases = {name.strip(): float(value) for name, value in re.findall(r"([a-z ]+) (\d+\.\d+) s", line.split(": ", 1)[1])}
    return wall, phases, json.loads((out / "report.json").read_text())


def speed(runs: int, scratch: Path) -> None:
    walls, phases = [], {}
    for i in range(runs):
        wall, timings, report = run(scratch / f"run-{i}", None)
        walls.append(wall)
        for name, seconds in timings.items():
            phases.setdefault(name, []).append(seconds)
        print(f"run {i + 1}: wall {wall:.2f} s, scorer {report['info']['scorer']}; "
              + ", ".join(f"{name} {seconds:.3f}" for name, seconds in timings.items()), flush=True)
    print(f"median wall {statistics.median(walls):.2f} s over {runs} runs (target <= 2.5 s); median plot "
          f"{statistics.median(phases['plot']):.3f} s (target < 0.3 s); median phases: "
          + ", ".join(f"{name} {statistics.median(values):.3f}" for name, values in phases.items()))


def fallbacks(first: int, stop: int, scratch: Path) -> None:
    failed, gaps, inside = [], [], 0
    for seed in range(first, stop):
        _, _, report = run(scratch / f"seed-{seed}", seed)
        if report["info"]["scorer"] != PLUG_IN:
            failed.append((seed, report["info"]["scorer"]))
        gaps.append(abs(report["delta"][0] - report["theory"][0]))
        inside += all(lo <= t <= up for lo, t, up in zip(report["delta_lower"], report["theory"], report["delta_upper"]))
    n, k = stop - first, len(failed)
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, 0.025))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 0.975))
    print(f"seeds {first}..{stop - 1}: {k} of {n} runs fell back from {PLUG_IN} ({k / n:.1%}, 95% Clopper-Pearson "
          f"[{low:.3f}, {high:.3f}]): {failed}; largest |delta-hat(0) - theory(0)| {max(gaps):.4f}; theory inside "
          f"[lower, upper] on the whole grid in {inside} of {n} runs")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs without a seed (default 5)")
    parser.add_argument("--seeds", help="A:B, count the pre-test's fallbacks over seeds A..B-1 instead of timing")
    args = parser.parse_args(argv)
    print(f"ndis {' '.join(JOB)} --out DIR --verbose; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
          f", {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        if args.seeds:
            first, stop = (int(v) for v in args.seeds.split(":"))
            fallbacks(first, stop, Path(scratch))
        else:
            speed(args.runs, Path(scratch))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
