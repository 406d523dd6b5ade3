"""The auditor's own cost per call of a per-sample mechanism, against the mechanism's call time.

    python benchmarks/per_sample_overhead.py [--n N]

A per-sample mechanism f(data, rng) that busy-waits 10 us or 1 ms is audited (n samples per side,
n_jobs=1, quadratic scorer). The mechanism's own time is counted inside it; the sampling time is the
audit's sampling phases (`report.timings`, probe excluded); the overhead per call is
(sampling time - mechanism time) / calls. Target: overhead / call time <= 1.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ndis.auditor import audit


class BusyMechanism:
    """x + N(0, 1) after busy-waiting `seconds`; per-sample; sums its own time in `spent`."""

    def __init__(self, seconds: float):
        self.seconds, self.spent, self.calls = seconds, 0.0, 0

    def __call__(self, data, rng):
        start = time.perf_counter()
        while time.perf_counter() - start < self.seconds:
            pass
        value = data + rng.standard_normal()
        self.spent += time.perf_counter() - start
        self.calls += 1
        return value


def measure(seconds: float, n: int) -> None:
    mech = BusyMechanism(seconds)
    report = audit(mech, 1.0, 0.0, eps=np.linspace(0, 1, 5), n_samples=n, seed=0, scorer="quadratic",
                   progress=False)
    timings = report.timings
    sampling = timings["sampling_training"] + timings["sampling_held_out"]
    calls = 2 * n  # the 2 x 2 probe calls are outside the timed phases
    spent = mech.spent * calls / mech.calls
    overhead = (sampling - spent) / calls
    print(f"{seconds * 1e6:>7.0f} us mechanism, n={n:,} per side: mechanism {spent:.3f} s, sampling {sampling:.3f} s, "
          f"overhead {overhead * 1e6:.2f} us/call, overhead / call time = {overhead / (spent / calls):.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="samples per side for the 10 us mechanism "
                        "(the 1 ms one uses n / 20)")
    args = parser.parse_args(argv)
    measure(10e-6, args.n)
    measure(1e-3, max(args.n // 20, 400))


if __name__ == "__main__":
    main()
