"""What an audit's sizes cost, checked before any work: the split of each side's samples, the sampling
chunks, and the memory and time an audit needs against the memory this process can still use.

Standard library only, so that the command line can refuse a size before it imports numpy or the
auditor. The estimate (`estimate`) counts what the audit itself allocates:

* per eps point, `BYTES_PER_EPS`: the curves, bounds and floors on the grid and the report's JSON,
  CSV, plot and HTML. Measured: the peak resident memory of `ndis audit gaussian --param sigma=1
  --data synthetic:n=20,d=2,seed=0 --neighbor remove:0 --samples 4000 --scorer quadratic --eps 0:2:N`
  grew from 241 MB at N = 20,000 to 436 MB at N = 100,000: 2.4 KB per point;
* per sampling task, `BYTES_PER_TASK`: every task of a phase (its seed sequence, size and offset)
  is listed before the first runs; 524 bytes each by tracemalloc, plus the lists of sizes and offsets;
* the training samples of both sides, `(fit + validation) x feature width` float64 values per side,
  held twice while the chunks are joined;
* the held-out scores of both sides when they are kept (`streaming=False`), also twice;
* one chunk of raw output (at most `CHUNK_BYTES`) and its transform per worker.

A scorer's own working memory is not counted (e.g. the quadratic scorer's expansion to
k + k(k+1)/2 terms of up to 250,000 rows per side), nor is the interpreter's. The time is a lower
bound: `SECONDS_PER_EPS` per eps point (the detectable floor's search in each direction,
`auditor.statistics.bounds.detectable_floor`, took 3.3 to 10 ms of CPU per point and direction for
2,000 to 10^7 held-out samples, plus the report) and `SAMPLES_PER_SECOND` per worker (a batched 1-D
Gaussian with the quadratic scorer, the fastest pipeline measured, ran 5.3 to 5.9 x 10^5 samples per
CPU second; a real mechanism is slower). `check` and `within` refuse, before any work, an audit that
needs more memory than is available or, given a limit (`ndis.audit`'s `max_seconds`, which `assert_dp`
sets), more time.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from typing import Any

#: Fewest samples per side for each of fitting, validation and held-out estimation.
MIN_PART = 50
#: The largest eps an audit takes: log of the largest float64, beyond which e^eps overflows (and no
#: audit of any size could certify a delta there: its bound subtracts e^eps times a positive number).
MAX_EPS = math.log(sys.float_info.max)
#: Bytes of raw output per sampling chunk at most (see `chunk_size_for`).
CHUNK_BYTES = 32 * 2**20
#: Measured bytes per eps point of an audit and its report (see the module docstring).
BYTES_PER_EPS = 2_500
#: Measured bytes per listed sampling task.
BYTES_PER_TASK = 600
#: Lower bound of the CPU seconds per eps point (the floor in both directions and the report).
SECONDS_PER_EPS = 0.01
#: Upper bound of the samples per second one worker can draw, score and count.
SAMPLES_PER_SECOND = 1e6
#: The default split of each side's samples: (train_fraction, max_train, validation_fraction).
DEFAULT_SPLIT = (0.5, 10**6, 0.25)


def split(n_samples: int, train_fraction: float = 0.5, max_train: int = 10**6,
          validation_fraction: float = 0.25) -> tuple[int, int, int]:
    """(fit, validation, held-out) samples per side: min(train_fraction n, max_train) train the score,
    `validation_fraction` of them validate it, the rest of the n are held out; each at least MIN_PART."""
    if not isinstance(n_samples, (int, numbers.Integral)) or n_samples < 4 * MIN_PART:  # int: for type checkers
        raise ValueError(f"n_samples (per side) must be an integer >= {4 * MIN_PART}, got {n_samples!r}")
    if not 0 < train_fraction < 1 or not 0 < validation_fraction < 1:
        raise ValueError("train_fraction and validation_fraction must lie in (0, 1)")
    try:
        n_train = min(int(n_samples * train_fraction), int(max_train))
    except OverflowError:
        raise ValueError(f"n_samples={count(n_samples)} per side is more than any machine can draw") from None
    n_valid = int(n_train * validation_fraction)
    n_fit, n_held = n_train - n_valid, int(n_samples) - n_train
    if min(n_fit, n_valid, n_held) < MIN_PART:
        raise ValueError(f"n_samples={n_samples} leaves fewer than {MIN_PART} samples for fitting, validation "
                         f"or held-out estimation (fit {n_fit}, validation {n_valid}, held-out {n_held})")
    return n_fit, n_valid, n_held


def minimum_samples(train_fraction: float = 0.5, max_train: int = 10**6, validation_fraction: float = 0.25) -> int:
    """The smallest n_samples `split` accepts (every part grows with n, so a bisection finds it)."""

    def fits(n: int) -> bool:
        try:
            split(n, train_fraction, max_train, validation_fraction)
            return True
        except ValueError:
            return False

    lo, hi = 4 * MIN_PART - 1, 4 * MIN_PART
    while not fits(hi):
        if hi > 2**62:
            raise ValueError(f"no sample size gives {MIN_PART} validation samples with max_train={max_train} and "
                             f"validation_fraction={validation_fraction}")
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # fits(hi), not fits(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def chunk_size_for(sample_shape: tuple[int, ...], n: int, budget_bytes: int = CHUNK_BYTES) -> int:
    """Samples per chunk of a phase of n samples: min(ceil(n / 20), about `budget_bytes` of raw output,
    2^18), at least 1. It depends on (n, output shape) only, so results do not depend on the workers."""
    per_sample = 8 * (math.prod(int(s) for s in sample_shape) or 1)
    return int(max(min(math.ceil(n / 20), budget_bytes // per_sample, 2**18), 1))


def available_memory() -> int | None:
    """Bytes this process can still allocate: MemAvailable of /proc/meminfo (Linux), else the free
    physical pages of os.sysconf, lowered to what an address-space limit (`ulimit -v`) leaves;
    None when neither is known."""
    found = None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if found is None:
        try:
            found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    try:
        import resource
    except ImportError:  # not POSIX: no address-space limit to read
        return found
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as statm:
                used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            used = 0
        found = max(limit - used, 0) if found is None else min(found, max(limit - used, 0))
    return found


def estimate(n_eps: int, n_samples: int, sizes: tuple[int, int, int] | None = None, output_size: int = 1,
             feature_width: int | None = None, n_jobs: int | None = 1, streaming: bool = True) -> dict[str, Any]:
    """{"bytes": {part: bytes}, "total_bytes", "seconds_at_least"} of an audit (module docstring).
    `sizes` = (fit, validation, held-out) per side (default: all n_samples held out, none trained);
    `output_size` the values per sample; `feature_width` the columns of the training features
    (default `output_size`); `n_jobs` the workers (None or -1: one per core)."""
    fit, valid, held = sizes if sizes is not None else (0, 0, int(n_samples))
    width = output_size if feature_width is None else feature_width
    workers = max(int(n_jobs), 1) if n_jobs not in (None, -1) else (os.cpu_count() or 1)
    largest = max(fit + valid, held)
    tasks = math.ceil(largest / chunk_size_for((output_size,), largest))
    chunk = chunk_size_for((output_size,), largest)
    parts = {"eps grid": n_eps * BYTES_PER_EPS, "sampling tasks": tasks * BYTES_PER_TASK,
             "training samples": 2 * 2 * (fit + valid) * width * 8,
             "held-out scores": 0 if streaming else 2 * 2 * held * 8,
             "chunks in flight": workers * chunk * (output_size + width) * 8}
    seconds = n_eps * SECONDS_PER_EPS + 2 * int(n_samples) / (SAMPLES_PER_SECOND * workers)
    return {"bytes": parts, "total_bytes": sum(parts.values()), "seconds_at_least": seconds}


def count(n: int) -> str:
    """A sample or point count for a message: 1,234,567 up to 10^12, else 1.23e+15."""
    if n < 10**12:
        return f"{n:,}"
    try:
        return f"{float(n):.3g}"
    except OverflowError:
        return f"about 10^{len(str(int(n))) - 1}"


def _size(n: float) -> str:
    for unit, scale in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 2**10:.3g} KB"


def _duration(seconds: float) -> str:
    for unit, scale in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def check(n_eps: int, n_samples: int, max_seconds: float | None = None, **options: Any) -> dict[str, Any]:
    """`estimate` with the memory available, or ValueError when it does not fit (`within`)."""
    return within(estimate(n_eps, n_samples, **options), n_eps, n_samples, max_seconds)


def within(found: dict[str, Any], n_eps: int, n_samples: int, max_seconds: float | None = None) -> dict[str, Any]:
    """`found`, an `estimate` (or that of phases run one after another: the largest one's memory, the sum
    of their times), with "available_bytes", or ValueError (one line, with the estimate) when its memory
    exceeds `available_memory()` or, given `max_seconds`, when its time (`seconds_at_least`, a lower
    bound) exceeds it."""
    available = available_memory()
    found["available_bytes"] = available
    if available is not None and found["total_bytes"] > available:
        largest = max(found["bytes"], key=found["bytes"].get)
        raise ValueError(f"this audit needs about {_size(found['total_bytes'])} of memory, more than the "
                         f"{_size(available)} available (largest part: {largest}, {_size(found['bytes'][largest])}; "
                         f"{count(n_eps)} eps points, {count(n_samples)} samples per side; it would also take at least "
                         f"{_duration(found['seconds_at_least'])}): use a shorter eps grid or fewer samples")
    if max_seconds is not None and found["seconds_at_least"] > max_seconds:
        raise ValueError(f"this audit's {count(n_samples)} samples per side would take at least "
                         f"{_duration(found['seconds_at_least'])} to draw (at {count(int(SAMPLES_PER_SECOND))} samples "
                         f"per second per worker, faster than any pipeline measured), more than max_seconds="
                         f"{max_seconds:g}: use fewer samples or a larger max_seconds")
    return found
