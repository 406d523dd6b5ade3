"""The Executor's set-up and failures: a local Dask cluster reachable from this machine only, with
no dashboard unless asked for; lost Dask workers and bad chunk sizes as clear errors; the threads
backend's order, concurrency, BLAS limit, cancellation and errors."""

import threading
import time
import traceback
import urllib.error
import urllib.request

import numpy as np
import pytest

from ndis.auditor.sampling import adapters, chunks

ROOT = np.random.SeedSequence(0)


def _gaussian(n, rng):
    return rng.standard_normal((n, 1))


def _status(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _listening(psutil):
    """The local addresses this process listens on (TCP)."""
    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process().net_connections(kind="tcp")
            if c.status == psutil.CONN_LISTEN}


def test_a_local_dask_cluster_listens_on_localhost_only_and_serves_no_dashboard():
    # Before: the scheduler served the dashboard (logs, call stacks) on 0.0.0.0:8787 and every
    # worker an HTTP port on 0.0.0.0, for the whole audit.
    pytest.importorskip("distributed", reason="the Dask backend needs dask.distributed")
    psutil = pytest.importorskip("psutil")
    with chunks.Executor(n_jobs=2, backend="dask") as executor:
        info = executor._client.scheduler_info()
        assert info["address"].startswith("inproc://")  # tasks travel in-process: no socket at all
        assert len(info["workers"]) == 2 and all(w.startswith("inproc://") for w in info["workers"])
        ports = [info["services"]["dashboard"]] + [w["services"]["dashboard"] for w in info["workers"].values()]
        listening = _listening(psutil)
        assert {port for _, port in listening} >= set(ports)
        assert {ip for ip, port in listening if port in ports} == {"127.0.0.1"}
        scheduler_port = ports[0]
        assert _status(scheduler_port, "/health") == 200
        for path in ("/status", "/info/main/workers.html", "/json/identity.json"):
            assert _status(scheduler_port, path) == 404, path
        samples = chunks.draw(executor, _gaussian, 1_000, ROOT, (0, 0), 100, (1,), count=False)
    np.testing.assert_array_equal(samples, chunks.draw(chunks.Executor(), _gaussian, 1_000, ROOT, (0, 0), 100, (1,),
                                                       count=False))


def test_the_dashboard_is_served_on_localhost_when_asked_for():
    pytest.importorskip("distributed", reason="the Dask backend needs dask.distributed")
    psutil = pytest.importorskip("psutil")
    with chunks.Executor(n_jobs=1, backend="dask", dashboard=True) as executor:
        port = executor._client.scheduler_info()["services"]["dashboard"]
        assert {ip for ip, p in _listening(psutil) if p == port} == {"127.0.0.1"}
        assert _status(port, "/info/main/workers.html") == 200


def test_losing_every_dask_worker_is_a_clear_error():
    # Before: the cancelled chunks came back as CancelledError objects among the arrays, and the
    # concatenation failed with "all the input arrays must have same number of dimensions".
    pytest.importorskip("distributed", reason="the Dask backend needs dask.distributed")
    started = threading.Event()

    def slow(n, rng):
        started.set()
        time.sleep(0.1)
        return rng.standard_normal((n, 1))

    with chunks.Executor(n_jobs=2, backend="dask") as executor:
        def close_every_worker():
            started.wait(60)
            executor._cluster.scale(0)

        threading.Thread(target=close_every_worker, daemon=True).start()
        with pytest.raises(RuntimeError, match=r"the Dask cluster lost chunk \d+ of this sampling phase .*no result "
                                               r"was computed"):
            chunks.draw(executor, slow, 4_000, ROOT, (0, 0), 100, (1,), count=False)


@pytest.mark.parametrize("chunk_size", [-5, 0, 2.5, True, "many"])
def test_a_bad_chunk_size_is_refused_before_any_sampling(chunk_size):
    # Before: chunk_size=-5 gave "need at least one array to concatenate".
    calls = []

    def counted(n, rng):
        calls.append(n)
        return rng.standard_normal((n, 1))

    with pytest.raises((ValueError, TypeError), match="chunk_size must be"):
        chunks.draw(chunks.Executor(), counted, 100, ROOT, (0, 0), chunk_size, (1,), count=False)
    assert calls == []
    assert chunks.check_chunk_size(None) is None and chunks.check_chunk_size(7) == 7


def test_complex_outputs_are_named():
    with pytest.raises(ValueError, match="returned complex numbers .*outputs must be real"):
        adapters.validate_output(np.ones((3, 1)) * 1j, 3, None, "mech (training)")
    with pytest.raises(ValueError, match="call 0 returned complex numbers"):
        adapters.validate_output(adapters._Calls([1j, 2.0, 3.0]), 3, None, "mech (training)")


def test_a_bad_scheduler_address_is_named():
    # Before: "missing port number in address 'nonsense'", not saying it was the scheduler's.
    pytest.importorskip("distributed", reason="the Dask backend needs dask.distributed")
    with pytest.raises(ValueError, match="cannot connect to the Dask scheduler 'nonsense': missing port"):
        with chunks.Executor(backend="dask", scheduler="nonsense"):
            pass


def _slow_square(i, started, running, most):
    with running[1]:
        running[0] += 1
        most.append(running[0])
    started.append(i)
    time.sleep(0.01)
    with running[1]:
        running[0] -= 1
    from threadpoolctl import threadpool_info

    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return i * i, blas


def test_threads_run_tasks_at_once_in_order_with_one_blas_thread_each():
    started, running, most = [], [0, threading.Lock()], []
    with chunks.Executor(n_jobs=2, backend="threads") as executor:
        results = list(executor.run(_slow_square, [(i, started, running, most) for i in range(12)]))
    assert [i for i, _ in results] == list(range(12)) and [r[0] for _, r in results] == [i * i for i in range(12)]
    assert max(most) == 2  # two tasks ran at once, never more
    assert all(threads == 1 for _, (_, blas) in results for threads in blas)  # nested limits restore 1, not more


def test_stopping_a_threaded_phase_cancels_the_tasks_not_started():
    started, running, most = [], [0, threading.Lock()], []
    with chunks.Executor(n_jobs=2, backend="threads") as executor:
        tasks = executor.run(_slow_square, [(i, started, running, most) for i in range(200)])
        next(tasks)
        tasks.close()  # as a KeyboardInterrupt or an error in the fold would
    time.sleep(0.1)
    assert len(started) <= 1 + 2 * 2 + 2  # the first, those submitted ahead, at most one more per thread


def _failing(n, rng):
    if rng.random() < 0.2:
        raise ArithmeticError("the user's own bug")
    return rng.standard_normal((n, 1))


def test_a_mechanism_error_in_a_thread_keeps_its_traceback():
    with chunks.Executor(n_jobs=2, backend="threads") as executor:
        with pytest.raises(Exception) as caught:
            chunks.draw(executor, _failing, 1_000, ROOT, (0,), 40, (1,), name="failing")
    assert "failing" in str(caught.value) and isinstance(caught.value.__cause__, ArithmeticError)
    assert "_failing" in [frame.name for frame in traceback.extract_tb(caught.value.__cause__.__traceback__)]


def test_threads_draw_the_same_samples_as_one_worker():
    with chunks.Executor(n_jobs=1) as one, chunks.Executor(n_jobs=3, backend="threads") as three:
        a = chunks.draw(one, _gaussian, 10_000, ROOT, (0, 1), 700, (1,))
        b = chunks.draw(three, _gaussian, 10_000, ROOT, (0, 1), 700, (1,))
    np.testing.assert_array_equal(a, b)
