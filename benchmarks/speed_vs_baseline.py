"""Wall time of two audits on this code and on an older commit, side by side in one run.

    python benchmarks/speed_vs_baseline.py [--baseline 461add5|none] [--runs 3] [--only readme|als] [--samples 10000000]

The older commit (default 461add5, the code when issue 12 was filed) is checked out into a
temporary git worktree and run from there (its CLI is `experiments.cli:main`, its packages are
top-level folders, so it runs with PYTHONPATH set to the worktree); this code runs as `python -m
ndis`. Both get the same interpreter and the same environment (set OPENBLAS_NUM_THREADS yourself;
it is printed). The runs alternate old, new, old, new, ... and each is a whole process (imports,
sampling, training, estimation, writing the report), timed from start to exit.

Jobs: `readme`, the README's main job (ALS, r = 10,000, on flights:20000, 10^6 samples per side,
31 eps, scorer auto); `als`, ALS (r = 50) on the county cancer table, its worst row removed, a
12-dimensional output, 10^7 samples per side, 41 eps, scorer quadratic. Prints each run's wall and
CPU time, the medians, the ratio old / new of the median wall times, and the largest difference of
the two estimates delta-hat(eps) of the last runs (they differ by sampling noise: the chunking of the
random streams changed after the old commit). CPU time (the process and its children, user + system)
is printed too: on a loaded machine it is the steadier measure. With `--baseline none` only this code
runs (e.g. `--baseline none --only readme --runs 5`: the README job's median over 5 runs).

Measured here on main 6be202e (streaming, claimed curves, single PNG rendering) (load average about 2: one other single-process
benchmark running), OPENBLAS_NUM_THREADS=1, baseline 461add5:
readme (3 runs each): median wall 13.52 s old vs 6.40 s new (ratio 2.11), CPU ratio 2.10;
als (10^7 per side, 1 run each): wall 61.70 s old vs 36.88 s new (ratio 1.67), CPU ratio 1.69;
largest |delta-hat old - new| 0.0015 and 0.0002. (On a machine at load average 11-17, at fff16f1:
readme 37.46 s vs 14.97 s, ratio 2.50; als 268.9 s vs 91.4 s, ratio 2.94.)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CANCER = os.environ.get("NDIS_CANCER_PATH")  # the county cancer CSV; the `als` job is skipped without it


def jobs(samples: str) -> dict[str, list[str]]:
    """The audits' command-line arguments (the same for both versions), by job name."""
    found = {"readme": ["audit", "als", "--param", "r=10000", "--data", "flights:20000", "--eps", "0:1.5:31", "--seed", "0"]}
    if CANCER:
        found["als"] = ["audit", "als", "--param", "r=50", "--data", f"cancer:{CANCER}", "--neighbor", "remove:worst",
                        "--eps", "0:2:41", "--samples", samples, "--scorer", "quadratic", "--seed", "0"]
    return found


def run(command: list[str], env: dict, out: pathlib.Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one run writing to `out`, started
    in out's parent folder (not in this repository, whose top-level folders would shadow the old code's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command + ["--out", str(out)], env=env, cwd=out.parent, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def estimates(out: pathlib.Path) -> list[float]:
    with open(out / "spectrum.csv") as handle:
        return [float(row["delta"]) for row in csv.DictReader(handle)]


@contextlib.contextmanager
def baseline_tree(commit: str, scratch: pathlib.Path):
    """A temporary git worktree of `commit` (None for none), removed on exit."""
    if commit is None:
        yield None
        return
    tree = scratch / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True, capture_output=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="461add5", help="the older commit (default 461add5), or none")
    parser.add_argument("--runs", type=int, default=3, help="runs of each version per job (default 3)")
    parser.add_argument("--only", choices=("readme", "als"), help="run one job only")
    parser.add_argument("--samples", default="10000000", help="samples per side of the als job (default 10000000)")
    args = parser.parse_args(argv)
    baseline = None if args.baseline == "none" else args.baseline

    env = dict(os.environ)
    print(f"baseline {baseline} vs this code ({subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()}), "
          f"{args.runs} alternating runs each; OPENBLAS_NUM_THREADS={env.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as scratch, baseline_tree(baseline, pathlib.Path(scratch)) as old_tree:
        scratch = pathlib.Path(scratch)
        versions = {"new": ([sys.executable, "-m", "ndis"], env)}
        if old_tree is not None:
            versions = {"old": ([sys.executable, "-c", "from experiments.cli import main; main()"],
                                {**env, "PYTHONPATH": str(old_tree)}), **versions}
        for job, arguments in jobs(args.samples).items():
            if args.only and job != args.only:
                continue
            walls, cpus = {version: [] for version in versions}, {version: [] for version in versions}
            for i in range(args.runs):
                for version, (prefix, version_env) in versions.items():
                    wall, cpu = run(prefix + arguments, version_env, scratch / f"{job}-{version}")
                    walls[version].append(wall)
                    cpus[version].append(cpu)
                    print(f"[{job}] run {i + 1} {version}: wall {wall:.2f} s, CPU {cpu:.2f} s", flush=True)
            print(f"[{job}] ndis {' '.join(arguments)}")
            wall, cpu = ({v: statistics.median(t[v]) for v in versions} for t in (walls, cpus))
            line = f"[{job}] median wall: new {wall['new']:.2f} s; median CPU: new {cpu['new']:.2f} s"
            if old_tree is not None:
                gap = max(abs(a - b) for a, b in zip(estimates(scratch / f"{job}-old"), estimates(scratch / f"{job}-new")))
                line = (f"[{job}] median wall: old {wall['old']:.2f} s, new {wall['new']:.2f} s, ratio old/new "
                        f"{wall['old'] / wall['new']:.2f}; median CPU: old {cpu['old']:.2f} s, new {cpu['new']:.2f} s, "
                        f"ratio {cpu['old'] / cpu['new']:.2f}; max |delta-hat old - new| = {gap:.4f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
