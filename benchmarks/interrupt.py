"""How fast `ndis audit` stops on Ctrl-C (SIGINT) and SIGTERM, what it leaves behind, and no orphans.

    python benchmarks/interrupt.py [--ms 2] [--repeats 3]

A per-sample plug-in that sleeps `--ms` milliseconds per call is audited from the command line
(synthetic:n=20,d=2,seed=0, --neighbor remove:0, the quadratic scorer), on 1 worker and on 2 loky
workers. The signal is sent to the command's process alone (not its process group, as a terminal's
Ctrl-C would, nor to its workers), either inside the first sampling phase (--samples 1e5, after the
plug-in's 50th call in a process: nothing completed, nothing may be written) or just after training
completed (--samples 4000: a partial report must be written). Prints, per case, the latency from the
signal to the process's exit (target < 2 s), the exit status, whether partial.json was written, and
how many of the command's child processes (loky workers, resource tracker) were still alive 2 s after
it exited (target 0).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time

PLUGIN = """import time

import numpy as np

calls = []


def slow(data, rng):
    calls.append(1)
    if len(calls) == 50:  # well inside a sampling phase (a phase's chunks are 50 or more calls)
        open("started", "a").close()
    time.sleep({seconds})
    return np.asarray(data).mean(axis=0)[:2] + rng.standard_normal(2)
"""


def descendants(pid: int) -> set[int]:
    """The process ids below `pid` (children, grandchildren, ...), from /proc."""
    parents = {}
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def one(folder: pathlib.Path, signum: int, jobs: int, after_training: bool, index: int) -> dict:
    """Start an audit, wait for the moment, send the signal; the latency, status and what was left."""
    out = folder / f"out-{signum}-{jobs}-{after_training}-{index}"
    command = [sys.executable, "-m", "ndis.cli", "audit", "slow_plugin:slow", "--data", "synthetic:n=20,d=2,seed=0",
               "--neighbor", "remove:0", "--samples", "4000" if after_training else "1e5", "--jobs", str(jobs),
               "--scorer", "quadratic", "--eps", "0:1:5", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(folder), os.environ.get("PYTHONPATH")))))
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a
    # terminal delivers Ctrl-C, even when this script was started in the background (SIGINT then ignored)
    lines, moment = [], threading.Event()

    def read():
        for line in process.stderr:
            lines.append(line)
            if "training 1 scorer(s)" in line:
                moment.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not after_training:  # inside the first phase: its chunks are running once the pool is busy
        deadline = time.perf_counter() + 120
        while not (folder / "started").exists() and time.perf_counter() < deadline:
            time.sleep(0.05)
    else:
        moment.wait(300)
        time.sleep(0.5)  # inside the held-out phase
    children = descendants(process.pid)
    if process.poll() is not None:
        raise RuntimeError(f"the audit ended before the signal: {''.join(lines)}")
    process.send_signal(signum)
    sent = time.perf_counter()
    process.wait(timeout=120)
    latency = time.perf_counter() - sent
    reader.join(timeout=5)
    time.sleep(2.0)
    orphans = [pid for pid in children if alive(pid)]
    for pid in orphans:  # do not leave them running after the measurement
        os.kill(pid, signal.SIGKILL)
    (folder / "started").unlink(missing_ok=True)
    return {"latency": latency, "status": process.returncode, "partial": (out / "partial.json").exists(),
            "children": len(children), "orphans": len(orphans), "message": "".join(lines).strip().splitlines()[-1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ms", type=float, default=2.0, help="milliseconds per call of the plug-in (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name)
        (folder / "slow_plugin.py").write_text(PLUGIN.format(seconds=args.ms / 1000))
        print(f"{args.ms:g} ms per call; signal sent to the `ndis audit` process alone; target: < 2 s, 0 orphans")
        print(f"{'signal':<8}{'workers':>8}  {'moment':<22}{'latency (s), each run':<26}{'status':>7}"
              f"{'partial.json':>14}{'orphans':>9}")
        for signum in (signal.SIGINT, signal.SIGTERM):
            for jobs in (1, 2):
                for after_training in (False, True):
                    runs = [one(folder, signum, jobs, after_training, i) for i in range(args.repeats)]
                    moment = "after training" if after_training else "in the first phase"
                    latencies = ", ".join(f"{r['latency']:.2f}" for r in runs)
                    statuses = sorted({r["status"] for r in runs})
                    partial = sorted({r["partial"] for r in runs})
                    orphans = sum(r["orphans"] for r in runs)
                    print(f"{signal.Signals(signum).name:<8}{jobs:>8}  {moment:<22}{latencies:<26}"
                          f"{'/'.join(map(str, statuses)):>7}{'/'.join(map(str, partial)):>14}"
                          f"{orphans:>4} of {sum(r['children'] for r in runs)}")
                    print(f"          last line: {runs[-1]['message'][0] if runs[-1]['message'] else ''}")


if __name__ == "__main__":
    main()
