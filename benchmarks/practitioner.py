"""The cost of the default neighbour screen for a slow plug-in, side by side with a given row.

    python benchmarks/practitioner.py [--samples 20000] [--ms 1]

A per-sample plug-in that takes about 1 ms per call (time.sleep) is audited from the command line
with default options (`--neighbor remove:worst`: a black-box screen within 20% of the sample
budget) and with `--neighbor remove:0` (no screen), both on synthetic:n=20,d=2,seed=0 with
--samples 20000. Prints both wall times (process start to exit) and their ratio (target <= 1.5).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

PLUGIN = """import time

import numpy as np


def slow_mean(data, rng):
    time.sleep({seconds})
    return np.asarray(data).mean(axis=0) + rng.standard_normal(np.shape(data)[1])
"""


def run(folder: pathlib.Path, samples: int, neighbor: str | None) -> float:
    """Wall time of one `ndis audit` of the plug-in, in seconds."""
    command = [sys.executable, "-m", "ndis.cli", "audit", "slow_plugin:slow_mean",
               "--data", "synthetic:n=20,d=2,seed=0", "--samples", str(samples), "--out", str(folder / f"out-{neighbor or 'default'}")]
    if neighbor:
        command += ["--neighbor", neighbor]
    env = dict(os.environ, PYTHONPATH=str(folder))
    started = time.perf_counter()
    subprocess.run(command, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000, help="samples per side (default 20000)")
    parser.add_argument("--ms", type=float, default=1.0, help="milliseconds per call of the plug-in (default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name)
        (folder / "slow_plugin.py").write_text(PLUGIN.format(seconds=args.ms / 1000))
        given = run(folder, args.samples, "remove:0")
        default = run(folder, args.samples, None)
    print(f"{args.ms:g} ms per call, {args.samples} samples per side on synthetic:n=20,d=2,seed=0")
    print(f"  --neighbor remove:0      {given:7.1f} s")
    print(f"  default (remove:worst)   {default:7.1f} s")
    print(f"  ratio {default / given:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
