"""A worker process that dies in the middle of an audit loses and duplicates no samples: its chunks
are run again (each is a function of its seed key), so the report is the one of an undisturbed run."""

import functools
import os
import time

import numpy as np
import pytest

from ndis.auditor import Execution, audit
from ndis.auditor.sampling import chunks

EPS = np.linspace(0, 1, 6)
KILL_KEY = (1, 1, 3)  # D' side, held-out part, chunk 3: well inside the run
KWARGS = dict(eps=EPS, n_samples=20_000, seed=5, scorer="quadratic", progress=False)


def dying_gaussian(data, n, rng, marker):
    """x + N(0, 1), batched; on the chunk seeded by KILL_KEY it kills its own process, the first time only."""
    if tuple(rng.bit_generator.seed_seq.spawn_key[-3:]) == KILL_KEY and not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(0.1)  # time for the Dask scheduler to settle where the shared values are kept
        os._exit(1)
    return data + rng.standard_normal((n, 1))


def _curves(report):
    return [getattr(report, name) for name in ("delta", "delta_lower", "delta_upper", "floor")]


def _assert_same(a, b):
    for x, y in zip(_curves(a), _curves(b)):
        np.testing.assert_array_equal(x, y)


@pytest.fixture
def reference():
    mech = functools.partial(dying_gaussian, marker=os.devnull)  # /dev/null exists: never dies
    return audit(mech, 1.0, 0.0, **KWARGS)


def test_a_dying_loky_worker_is_replaced_and_its_chunks_rerun(tmp_path, reference):
    marker = tmp_path / "killed"
    report = audit(functools.partial(dying_gaussian, marker=str(marker)), 1.0, 0.0, execution=Execution(n_jobs=2),
                   **KWARGS)
    assert marker.exists()
    _assert_same(report, reference)


def test_a_dask_worker_killed_mid_run_is_replaced_and_its_tasks_rescheduled(tmp_path, reference):
    distributed = pytest.importorskip("distributed", reason="the Dask backend needs dask.distributed")
    import dask

    marker = tmp_path / "killed"
    # The scheduler's active memory manager every 5 ms drops the replicas it deems unneeded at once:
    # a value shared with the tasks must survive the loss of the one worker left holding it.
    with dask.config.set({"distributed.scheduler.active-memory-manager.interval": "5ms"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        report = audit(functools.partial(dying_gaussian, marker=str(marker)), 1.0, 0.0,
                       execution=Execution(backend="dask", scheduler=client), **KWARGS)
    assert marker.exists()
    _assert_same(report, reference)


def test_workers_that_keep_dying_end_the_audit_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "RETRIES", 0)
    mech = functools.partial(dying_gaussian, marker=str(tmp_path / "killed"))
    with pytest.raises(RuntimeError, match=r"died in each of 1 attempt\(s\)"):
        audit(mech, 1.0, 0.0, execution=Execution(n_jobs=2), **KWARGS)
