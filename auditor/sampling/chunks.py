"""Drawing mechanism outputs in seeded chunks: sequentially, on threads of this process, on joblib
(loky) worker processes or on Dask.

Samples are drawn in chunks; chunk j of part `part` on side `side` uses the generator of the
SeedSequence child with spawn key (side, part, j) of the audit's root sequence (the same child
`SeedSequence.spawn` would give). The chunking rule is deterministic: a phase of n samples is cut
into chunks of min(ceil(n / 20), about 32 MB of raw output) samples (`core.budget.chunk_size_for`), whatever the
mechanism's kind or speed, so that even a slow plug-in shows progress every 5% and stops promptly.
So the numbers are the same on 1 worker or 16, on threads, loky or a Dask cluster, and memory is bounded
by the chunk size times the number of workers: each task returns only its transformed chunk (e.g.
the bin counts of its held-out scores, `auditor.statistics.histogram`), and a fold adds them as they
arrive.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import os
import warnings
from typing import Callable

import numpy as np

from ...core.budget import chunk_size_for
from ...core.errors import MechanismError
from ...core.thread_pools import thread_limit
from ...core.validation import as_int, optional
from ..reporting.progress import Progress
from .adapters import validate_output

RETRIES = 3  # reruns of the unfinished chunks after a loky worker process died


def chunk_seed(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The SeedSequence child of `root` with the given spawn key suffix, without mutating `root`."""
    return np.random.SeedSequence(entropy=root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key))


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """An int, None or SeedSequence as a SeedSequence (None draws fresh entropy, recorded in reports)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed < 0:
        raise ValueError(f"seed must be a non-negative integer, None or a numpy.random.SeedSequence, got {seed}")
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.SeedSequence(None if seed is None else int(seed))
    raise TypeError(f"seed must be an int, None or numpy.random.SeedSequence, got {type(seed).__name__}")


def check_chunk_size(chunk_size) -> int | None:
    """`chunk_size` (samples per task) checked: None (`chunk_size_for` decides) or an integer >= 1."""
    return optional(as_int, "chunk_size", chunk_size)


def _shared(value):
    """The task that holds a value shared with every task of a Dask phase (`Executor.share`)."""
    return value


def _draw(draw, n, seed_seq, shape, where, transform, start):
    rng = np.random.default_rng(seed_seq)
    try:
        raw = draw(n, rng)
    except Exception as error:  # the mechanism's own code failed: keep its traceback, say where
        raise MechanismError(where, error) from error
    samples = validate_output(raw, n, shape, where, start)
    return samples if transform is None else transform(samples)


class Executor:
    """Runs chunk tasks sequentially, on threads of this process, on joblib (loky) worker processes, or
    on a Dask cluster; in order.

    Threads suit samplers and transforms made of numpy calls, which release the GIL: no process to
    start, nothing pickled. They need a thread-safe sampler, so by default (n_jobs and backend None)
    an audit samples on one thread per core only a mechanism that declares itself `thread_safe`
    (ndis's own), and anything else sequentially; backend="threads" asks for them explicitly.

    A worker process that dies loses no chunk: loky's unfinished chunks are re-run (`_loky`), and
    the Dask scheduler reschedules the tasks of a lost worker itself (up to its `allowed-failures`
    per task). A re-run chunk reproduces itself from its seed key, so the report does not change.

    With backend="dask" and no `scheduler`, the cluster is made here (`local_cluster`): its workers are
    threads of this process talking in-process, and its HTTP servers listen on 127.0.0.1 only,
    serving nothing but a health check unless `dashboard` is True (then the Dask dashboard, whose
    pages show logs and call stacks, on http://127.0.0.1:8787 or the next free port, still reachable
    from this machine only)."""

    def __init__(self, n_jobs: int | None = 1, backend: str | None = "loky", scheduler=None,
                 progress: Progress | None = None, dashboard: bool = False, thread_safe: bool = False):
        if backend is None:
            backend = "threads" if thread_safe else "loky"
        if n_jobs is None:
            n_jobs = -1 if thread_safe or backend != "loky" else 1
        self.n_jobs, self.backend, self.scheduler, self.dashboard = int(n_jobs), backend, scheduler, bool(dashboard)
        self.progress = progress or Progress()
        self._client = self._cluster = None
        self._own_client = False

    @property
    def workers(self) -> int:
        """The number of tasks run at once (n_jobs, -1 being the cores of this machine)."""
        return self.n_jobs if self.n_jobs > 0 else os.cpu_count() or 1

    def __enter__(self):
        if self.backend == "dask":
            try:
                from distributed import Client
            except ImportError:
                raise ImportError('backend="dask" needs dask.distributed, which is not installed: '
                                  'pip install "ndis[distributed]"') from None

            if isinstance(self.scheduler, Client):
                self._client = self.scheduler
            elif self.scheduler:
                try:
                    self._client, self._own_client = Client(self.scheduler), True
                except (OSError, ValueError) as error:  # a malformed or unreachable address (TimeoutError is an OSError)
                    raise ValueError(f"cannot connect to the Dask scheduler {self.scheduler!r}: {error}") from None
            else:
                self._cluster = local_cluster(self.workers, self.dashboard)
                self._client, self._own_client = Client(self._cluster), True
                if self.dashboard:
                    port = self._client.scheduler_info()["services"]["dashboard"]
                    self.progress.note(f"Dask dashboard: http://127.0.0.1:{port}/status (this machine only)")
        return self

    def __exit__(self, *exc):
        if self._own_client:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None
        self._own_client = False

    def share(self, value):
        """An argument of every task, sent once; unchanged off Dask. On this process's own cluster it
        is scattered (in-process: neither pickled nor lost unless the process is). On any other
        cluster it is the result of a task (workers fetch it once each): scattered data is lost
        with the last worker holding it, and the scheduler's active memory manager may leave it on
        one worker, whereas a lost task result is computed again on another worker."""
        if self.backend != "dask" or value is None:
            return value
        if self._cluster is not None:
            return self._client.scatter(value, broadcast=True, hash=False)
        with warnings.catch_warnings():  # the value is sent once, not repeated in the graph
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self._client.submit(_shared, value, pure=False)

    def map(self, function, argument_lists, done: Callable[[int], None]):
        """[function(*args) for args in argument_lists], computed in parallel, results in order;
        done(i) is called as task i completes."""
        results = [None] * len(argument_lists)
        for i, result in self.run(function, argument_lists):
            results[i] = result
            done(i)
        return results

    def run(self, function, argument_lists):
        """Yield (i, function(*argument_lists[i])) as the tasks complete (in order, except on Dask), so
        a caller can fold the results without keeping them. Ctrl-C stops at once: the sequential path
        between chunks, threads, joblib and Dask by cancelling what is pending."""
        if self.backend == "dask":
            yield from self._dask(function, argument_lists)
        elif self.n_jobs == 1:
            for i, args in enumerate(argument_lists):
                yield i, function(*args)
        elif self.backend == "threads":
            yield from self._threads(function, argument_lists)
        else:
            yield from self._loky(function, argument_lists)

    def _threads(self, function, argument_lists):
        """The threads path: `workers` threads, at most twice as many tasks submitted at a time (so
        at most that many results wait in memory), results in order. BLAS is held at one thread for
        the whole phase, so each task's own one-thread limit restores one thread when it ends, whatever
        the other threads are doing. On Ctrl-C or an error the tasks not started are cancelled and
        the running ones are left to finish in the background (a chunk at most each)."""
        from concurrent.futures import ThreadPoolExecutor

        tasks = iter(enumerate(argument_lists))
        with thread_limit(1):
            pool = ThreadPoolExecutor(self.workers, thread_name_prefix="ndis-sampling")
            pending = collections.deque((i, pool.submit(function, *args))
                                        for i, args in itertools.islice(tasks, 2 * self.workers))
            try:
                while pending:
                    i, future = pending.popleft()
                    result = future.result()
                    following = next(tasks, None)
                    if following is not None:
                        pending.append((following[0], pool.submit(function, *following[1])))
                    yield i, result
            finally:
                pool.shutdown(wait=not pending, cancel_futures=True)

    def _dask(self, function, argument_lists):
        from distributed import as_completed

        futures = [self._client.submit(function, *args, pure=False) for args in argument_lists]
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for done, (future, result) in enumerate(as_completed(futures, with_results=True)):
                i = index[future.key]
                if future.status != "finished":  # cancelled: as_completed hands over the CancelledError
                    raise RuntimeError(
                        f"the Dask cluster lost chunk {i} of this sampling phase ({future.status}: {result}) after "
                        f"{done} of {len(futures)} chunks: its workers, or the sampler shared with them, were lost "
                        "(e.g. every worker died or was closed); no result was computed for this phase")
                futures[i] = None  # the cluster may forget a result once it is consumed
                yield i, result
        finally:
            pending = [future for future in futures if future is not None]
            if pending:  # interrupted or failed: do not leave work running on the cluster
                self._client.cancel(pending)

    def _loky(self, function, argument_lists):
        """The joblib path: when a worker process dies, the chunks that did not come back are run
        again on fresh workers (a chunk is a function of its seed, so a rerun reproduces it), at most
        `RETRIES` times per run."""
        from joblib import Parallel, delayed
        from joblib.externals.loky.process_executor import TerminatedWorkerError

        completed, failures = 0, 0
        while completed < len(argument_lists):
            try:
                for result in Parallel(n_jobs=self.n_jobs, backend="loky", return_as="generator")(
                        delayed(function)(*args) for args in argument_lists[completed:]):
                    completed += 1
                    yield completed - 1, result
            except TerminatedWorkerError as error:
                failures += 1
                if failures > RETRIES:
                    raise RuntimeError(f"a joblib worker process died in each of {failures} attempt(s) at this "
                                       f"sampling phase ({completed} of {len(argument_lists)} chunks done); "
                                       "giving up") from error
                self.progress.note(f"a worker process died ({type(error).__name__}); re-running chunks "
                                   f"{completed}..{len(argument_lists) - 1}")


def local_cluster(n_workers: int, dashboard: bool = False):
    """A Dask cluster of `n_workers` single-thread workers in this process (in-process transport, no
    listening socket for the tasks), whose HTTP servers bind 127.0.0.1 and, unless `dashboard`,
    serve only /health. Memory limits are off: the workers share this process, so a per-worker
    limit would weigh the whole process against a share of the memory and pause every worker."""
    import dask
    from distributed import Scheduler, SpecCluster, Worker

    http = {} if dashboard else {f"distributed.{node}.http.routes": ["distributed.http.health"]
                                 for node in ("scheduler", "worker")}
    scheduler = {"cls": Scheduler, "options": {"protocol": "inproc://", "dashboard": dashboard,
                                               "dashboard_address": "127.0.0.1:8787" if dashboard else "127.0.0.1:0"}}
    worker = {"cls": Worker, "options": {"protocol": "inproc://", "nthreads": 1, "memory_limit": 0,
                                         "dashboard": False, "dashboard_address": "127.0.0.1:0"}}
    with dask.config.set(http):
        return SpecCluster(scheduler=scheduler, workers={i: worker for i in range(n_workers)}, worker=worker,
                           silence_logs=logging.WARNING)


def draw(executor: Executor, draw_n: Callable, n: int, root: np.random.SeedSequence, key: tuple, chunk: int | None,
         shape, transform=None, desc: str = "sampling", name: str = "mechanism", count: bool = True, fold=None):
    """n samples from `draw_n(k, rng)` (a prepared sampler) in chunks of `chunk` (None: `chunk_size_for`),
    chunk j seeded by key + (j,). Returns the concatenation of transform(chunk) (or of the raw
    validated chunks); with fold = (step, initial), instead step(... step(initial, r_a), ...) over the
    chunk results r_j as they arrive, none of them kept (step must not depend on their order, e.g. a
    sum of counts, for the result to be the same on every backend). With `count`, the phase `desc` is
    shown by the executor's Progress.

    The prepared sampler and the transform are shipped with the tasks (once per Dask worker), so
    their set-up is not repeated per chunk.
    """
    n = as_int(f"the number of samples of {name} ({desc})", n)
    chunk = check_chunk_size(chunk) or chunk_size_for(() if shape is None else shape, n)
    starts = list(range(0, n, chunk))
    sizes = [min(chunk, n - start) for start in starts]
    where = f"{name} ({desc})"
    draw_n, transform = executor.share(draw_n), executor.share(transform)
    tasks = [(draw_n, size, chunk_seed(root, *key, j), shape, where, transform, start)
             for j, (size, start) in enumerate(zip(sizes, starts))]
    phase = executor.progress.phase(desc, n) if count else contextlib.nullcontext(lambda k: None)
    with phase as advance:
        if fold is None:
            return np.concatenate(executor.map(_draw, tasks, lambda i: advance(sizes[i])))
        step, value = fold
        for i, result in executor.run(_draw, tasks):
            value = step(value, result)
            advance(sizes[i])
        return value
