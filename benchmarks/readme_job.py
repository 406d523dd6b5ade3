"""The README's main job: its wall time per phase, and how often its scorer falls back to training.

    python benchmarks/readme_job.py [--runs 5] [--against af87f3b]   # wall time, phases, plot
    python benchmarks/readme_job.py --seeds 0:120                    # the pre-test's fallback rate
    python benchmarks/readme_job.py --pretest 4000                   # its rejection rate, old and new

The job is the README's command, `ndis audit als --param r=10000 --data flights:20000 --eps 0:1.5:31
--out DIR` (ALS, r = 10,000, 10^6 samples per side, scorer auto), run as a whole process (`python -m
ndis`: imports, audit, report files, exit) with `--verbose`, which prints the wall time of every phase
(`report.timings`, the imports before it, the plot and the other report files after it).

`--runs N` runs it N times without a seed, as the README does, and prints each run's wall time, its CPU
time (its processes', the plot helper's included), its scorer and its phases, then the median wall
time (the README job's time), the median CPU time, the median of every phase and the median plot time
(the wait for spectrum.png once the audit is done: its helper process, `ndis.plot_process`, imports
matplotlib while the audit runs, then draws and renders the report), the plot's parts (each run's
report.json drawn again in a fresh process: the matplotlib import, drawing, rendering), and the load
average.
With `--against COMMIT` (e.g. af87f3b, before issue 30's README work) the older commit runs too, from a
temporary git worktree put first on PYTHONPATH, alternating old, new, old, ...; the ratio of the median
walls is printed (the load of a shared machine moves both alike). `--against` also takes a checkout's
folder (e.g. a worktree with a change not committed), whose src/ is put first on PYTHONPATH.
`--pretest PAIRS` only draws validation-size ALS outputs of both sides and applies the pre-test at its
old level (0.01 per test) and at its new one (0.001 in all), to measure the two rejection rates closely.
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
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy.special import betaincinv
from speed_vs_baseline import baseline_tree  # this folder is on the path when the script runs

JOB = ["audit", "als", "--param", "r=10000", "--data", "flights:20000", "--eps", "0:1.5:31"]
PLUG_IN = "gaussian/mechanism"
#: The plot's parts, timed in a fresh process from a report.json (argv[1]): importing matplotlib (numpy
#: already loaded, as in the job), drawing
#: the figure (`AuditReport.plot`, its layout included), rendering the PNG (`html.render_png`).
PLOT_PARTS = """
import sys, time
import numpy  # loaded before the plot in the job too
started = time.perf_counter()
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
imported = time.perf_counter()
from ndis.auditor.reporting import html
from ndis.auditor.reporting.report import AuditReport
report = AuditReport.from_json(open(sys.argv[1]).read())
begun = time.perf_counter()
figure = report.plot()
drawn = time.perf_counter()
html.render_png(figure)
print(imported - started, drawn - begun, time.perf_counter() - drawn)
"""


def run(out: Path, seed: int | None, env: dict | None = None) -> tuple[float, dict, dict]:
    """(wall seconds, {phase: seconds}, report.json) of one run of the job writing to `out` (in the
    environment `env`: this code's by default)."""
    command = [sys.executable, "-m", "ndis", *JOB, "--out", str(out), "--verbose"]
    command += [] if seed is None else ["--seed", str(seed)]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=out.parent, env=env)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    line = next(line for line in result.stdout.splitlines() if line.startswith("timings"))
    phases = {name.strip(): float(value) for name, value in re.findall(r"([a-z ]+) (\d+\.\d+) s", line.split(": ", 1)[1])}
    return wall, phases, json.loads((out / "report.json").read_text())


def children_cpu() -> float:
    """CPU seconds (user and system) of this process's finished child processes and theirs: a job's
    process with its plot helper."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def speed(runs: int, scratch: Path, old_tree: Path | None) -> None:
    versions = {"new": None}
    if old_tree is not None:  # the older commit's package first on the path, ahead of this installed one
        versions = {"old": {**os.environ, "PYTHONPATH": str(old_tree / "src")}, **versions}
    walls, cpus, phases = {v: [] for v in versions}, {v: [] for v in versions}, {v: {} for v in versions}
    for i in range(runs):
        for version, env in versions.items():
            before = children_cpu()
            wall, timings, report = run(scratch / f"{version}-{i}", None, env)
            walls[version].append(wall)
            cpus[version].append(children_cpu() - before)
            for name, seconds in timings.items():
                phases[version].setdefault(name, []).append(seconds)
            print(f"run {i + 1} {version}: wall {wall:.2f} s, CPU {cpus[version][-1]:.2f} s, scorer {report['scorer']}; "
                  + ", ".join(f"{name} {seconds:.3f}" for name, seconds in timings.items()), flush=True)
    for version in versions:
        print(f"{version}: median wall {statistics.median(walls[version]):.2f} s over {runs} runs (target <= 2.5 s), "
              f"median CPU {statistics.median(cpus[version]):.2f} s; "
              f"median plot {statistics.median(phases[version]['plot']):.3f} s (target < 0.3 s); median phases: "
              + ", ".join(f"{name} {statistics.median(values):.3f}" for name, values in phases[version].items()))
    parts = [[float(v) for v in subprocess.run([sys.executable, "-c", PLOT_PARTS, str(scratch / f"new-{i}" / "report.json")],
                                               capture_output=True, text=True, check=True).stdout.split()]
             for i in range(runs)]
    print("new plot's parts, each run's report.json drawn again in a fresh process, medians: "
          + ", ".join(f"{name} {statistics.median(p[j] for p in parts):.3f} s"
                      for j, name in enumerate(("import matplotlib", "drawing", "rendering"))))
    if old_tree is not None:
        print(f"ratio old / new of the median walls: {statistics.median(walls['old']) / statistics.median(walls['new']):.2f}")


def rate(k: int, n: int) -> str:
    """k / n with its 95% Clopper-Pearson interval."""
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, 0.025))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 0.975))
    return f"{k / n:.2%}, 95% Clopper-Pearson [{low:.2%}, {high:.2%}]"


def fallbacks(first: int, stop: int, scratch: Path) -> None:
    failed, gaps, inside = [], [], 0
    for seed in range(first, stop):
        _, _, report = run(scratch / f"seed-{seed}", seed)
        if report["scorer"] != PLUG_IN:
            failed.append((seed, report["scorer"]))
        gaps.append(abs(report["delta"][0] - report["theory"][0]))
        inside += all(lo <= t <= up for lo, t, up in zip(report["delta_lower"], report["theory"], report["delta_upper"]))
    n, k = stop - first, len(failed)
    print(f"seeds {first}..{stop - 1}: {k} of {n} runs fell back from {PLUG_IN} ({rate(k, n)}): {failed}; largest |delta-hat(0) - theory(0)| {max(gaps):.4f}; theory inside "
          f"[lower, upper] on the whole grid in {inside} of {n} runs")


def pretest(pairs: int) -> None:
    """The pre-test's rejection rate on the job's own outputs, old level against new, without the audits:
    `pairs` seeded pairs of 20,000 validation-size rows of ALS on D and on D' (row 7008 removed)."""
    import numpy as np

    from ndis.auditor.scoring import selection
    from ndis.experiments import datasets
    from ndis.mechanisms import resolve

    mech, D = resolve("als", r=10_000), datasets.load("flights:20000")
    _, D_prime = mech.worst_neighbor(D, "remove")
    samplers = [mech.sampler(D), mech.sampler(D_prime)]
    p = np.array([[selection.gaussian_pvalue(draw(selection.GAUSS_ROWS, np.random.default_rng([seed, side])))
                   for side, draw in enumerate(samplers)] for seed in range(pairs)])
    old = int(np.sum(p.min(axis=1) < 0.01))
    new = int(np.sum(np.minimum(1, selection.GAUSS_TESTS * p.min(axis=1)) < selection.GAUSS_LEVEL))
    print(f"{pairs} pairs of {selection.GAUSS_ROWS:,} ALS outputs per side: the pre-test rejects {rate(old, pairs)} at "
          f"0.01 per test (before); {rate(new, pairs)} at family-wise {selection.GAUSS_LEVEL:g} (now)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs without a seed (default 5)")
    parser.add_argument("--against", metavar="COMMIT", help="also time this older commit (or a checkout's folder), "
                        "runs alternating")
    parser.add_argument("--seeds", help="A:B, count the pre-test's fallbacks over seeds A..B-1 instead of timing")
    parser.add_argument("--pretest", type=int, metavar="PAIRS",
                        help="the pre-test's rejection rate, old level and new, on PAIRS pairs of ALS outputs (no audits)")
    args = parser.parse_args(argv)
    if args.pretest:
        pretest(args.pretest)
        return
    import ndis.auditor.api  # noqa: F401 (to find out whether Python cached its bytecode)

    cached = Path(ndis.auditor.api.__cached__).is_file()
    print(f"ndis {' '.join(JOB)} --out DIR --verbose; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
          f", {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; PYTHONDONTWRITEBYTECODE="
          f"{os.environ.get('PYTHONDONTWRITEBYTECODE', 'unset')}, ndis's bytecode cached: {'yes' if cached else 'no'} "
          "(without it every run compiles ndis's modules, about 0.2 s)", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        if args.seeds:
            first, stop = (int(v) for v in args.seeds.split(":"))
            fallbacks(first, stop, Path(scratch))
        else:
            folder = Path(args.against) if args.against and Path(args.against).is_dir() else None
            with baseline_tree(None if folder else args.against, Path(scratch)) as old_tree:
                speed(args.runs, Path(scratch), folder or old_tree)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
