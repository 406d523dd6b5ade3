"""What an audit's sizes cost (core.budget): the split of the samples, its minimum, the chunking rule,
the memory estimate and the refusal of what cannot fit."""

import subprocess
import sys

import pytest

from ndis.core import budget


@pytest.mark.parametrize("split", [(0.5, 10**6, 0.25), (0.5, 10**6, 0.1), (0.3, 10**6, 0.5), (0.9, 10**6, 0.25)])
def test_the_minimum_is_the_smallest_sample_count_the_split_accepts(split):
    least = budget.minimum_samples(*split)
    fit, valid, held = budget.split(least, *split)
    assert min(fit, valid, held) >= budget.MIN_PART
    with pytest.raises(ValueError, match="fewer than 50 samples|must be an integer >= 200"):
        budget.split(least - 1, *split)


def test_the_default_minimum_is_400_and_a_split_that_never_validates_enough_is_refused():
    assert budget.minimum_samples() == 400 and budget.split(400) == (150, 50, 200)
    with pytest.raises(ValueError, match="no sample size gives 50 validation samples"):
        budget.minimum_samples(max_train=100)  # at most 25 validation samples, whatever n


def test_the_chunking_rule():
    assert budget.chunk_size_for((2,), 10**6) == 50_000  # n / 20
    assert budget.chunk_size_for((10**6,), 10**6) == 4  # 32 MB of output
    assert budget.chunk_size_for((1,), 10**12) == 2**18 and budget.chunk_size_for((), 3) == 1


def test_the_estimate_adds_its_parts():
    found = budget.estimate(100, 10**6, sizes=budget.split(10**6), output_size=3, feature_width=5, n_jobs=2)
    parts = found["bytes"]
    assert parts["eps grid"] == 100 * budget.BYTES_PER_EPS
    assert parts["training samples"] == 2 * 2 * 500_000 * 5 * 8  # both sides, twice while joined
    assert parts["sampling tasks"] == 20 * budget.BYTES_PER_TASK  # the largest phase, 500,000 in 20 chunks
    assert parts["held-out scores"] == 0 and parts["chunks in flight"] == 2 * 25_000 * (3 + 5) * 8
    assert found["total_bytes"] == sum(parts.values())
    assert found["seconds_at_least"] == 100 * budget.SECONDS_PER_EPS + 2 * 10**6 / (2 * budget.SAMPLES_PER_SECOND)
    kept = budget.estimate(100, 10**6, sizes=budget.split(10**6), streaming=False)
    assert kept["bytes"]["held-out scores"] == 2 * 2 * 500_000 * 8


def test_what_cannot_fit_is_refused_with_the_estimate(monkeypatch):
    monkeypatch.setattr(budget, "available_memory", lambda: 2**30)
    with pytest.raises(ValueError, match=r"needs about 2.27 TB of memory, more than the 1 GB available \(largest "
                                         r"part: eps grid.*at least 116 days"):
        budget.check(10**9, 10**6, sizes=budget.split(10**6))
    with pytest.raises(ValueError, match=r"largest part: sampling tasks.*1e\+300 samples per side"):
        budget.check(41, 10**300, sizes=budget.split(10**300))
    assert budget.check(41, 10**6, sizes=budget.split(10**6))["available_bytes"] == 2**30


def test_an_address_space_limit_lowers_the_memory_available():
    # under `ulimit -v` of 4 GB the process (already a few hundred MB of address space) has less than 4 GB
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, resource.RLIM_INFINITY)); "
            "from ndis.core import budget; print(budget.available_memory())")
    available = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 0 < available < 4 * 2**30
    unlimited = budget.available_memory()
    assert unlimited is None or unlimited > 0


def test_an_audit_longer_than_max_seconds_is_refused_with_the_estimate():
    # one worker draws at most SAMPLES_PER_SECOND = 10^6 samples per second: 2 x 10^10 samples take at
    # least 2 x 10^4 s, and the 41 eps points 0.41 s more
    sizes = budget.split(10**10)
    with pytest.raises(ValueError, match=r"^this audit's 10,000,000,000 samples per side would take at least 5.56 h "
                                         r"to draw .*more than max_seconds=3600: use fewer samples or a larger "
                                         r"max_seconds$"):
        budget.check(41, 10**10, 3600, sizes=sizes, n_jobs=1)
    assert budget.check(41, 10**10, 20_001, sizes=sizes, n_jobs=1)["seconds_at_least"] == pytest.approx(20_000.41)
    assert budget.check(41, 10**10, None, sizes=sizes, n_jobs=1)["seconds_at_least"] > 3600
