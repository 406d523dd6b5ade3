"""Drawing mechanism outputs in seeded chunks, sequentially, on joblib (loky) workers or on Dask.

Samples are drawn in chunks; chunk j of part `part` on side `side` uses the generator of the
SeedSequence child with spawn key (side, part, j) of the audit's root sequence (the same child
`SeedSequence.spawn` would give). The chunking rule is deterministic: a phase of n samples is cut
into chunks of min(ceil(n / 20), about 32 MB of raw output) samples (`core.budget.chunk_size_for`), whatever the
mechanism's kind or speed, so that even a slow plug-in shows progress every 5% and stops promptly.
So the numbers are the same on 1 worker or 16, with loky or on a Dask cluster, and memory is bounded
by the chunk size times the number of workers: each task returns only its transformed chunk (e.g.
the bin counts of its held-out scores, `auditor.statistics.histogram`), and a fold adds them as they
arrive.
"""

from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np

from ndis.core.budget import chunk_size_for
from ndis.core.errors import MechanismError

from ndis.auditor.reporting.progress import Progress
from ndis.auditor.sampling.adapters import validate_output

BACKENDS = ("loky", "dask")
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


def _draw(draw, n, seed_seq, shape, where, transform, start):
    rng = np.random.default_rng(seed_seq)
    try:
        raw = draw(n, rng)
    except Exception as error:  # the mechanism's own code failed: keep its traceback, say where
        raise MechanismError(where, error) from error
    samples = validate_output(raw, n, shape, where, start)
    return samples if transform is None else transform(samples)


class Executor:
    """Runs chunk tasks sequentially, on joblib (loky) workers, or on a Dask cluster; in order.

    A worker process that dies loses no chunk: loky's unfinished chunks are re-run (`_loky`), and
    the Dask scheduler reschedules the tasks of a lost worker itself (up to its `allowed-failures`
    per task). A re-run chunk reproduces itself from its seed key, so the report does not change."""

    def __init__(self, n_jobs: int = 1, backend: str = "loky", scheduler=None, progress: Progress | None = None):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
        if not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
            raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
        self.n_jobs, self.backend, self.scheduler = int(n_jobs), backend, scheduler
        self.progress = progress or Progress()
        self._client = self._cluster = None
        self._own_client = False

    def __enter__(self):
        if self.backend == "dask":
            try:
                from distributed import Client, LocalCluster
            except ImportError:
                raise ImportError('backend="dask" needs dask.distributed, which is not installed: '
                                  'pip install "ndis[distributed]"') from None

            if isinstance(self.scheduler, Client):
                self._client = self.scheduler
            elif self.scheduler:
                self._client, self._own_client = Client(self.scheduler), True
            else:
                workers = self.n_jobs if self.n_jobs > 0 else None
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=False,
                                             dashboard_address=None)
                self._client, self._own_client = Client(self._cluster), True
        return self

    def __exit__(self, *exc):
        if self._own_client:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None
        self._own_client = False

    def share(self, value):
        """Send an argument of every task to each Dask worker once (a future); unchanged for loky."""
        if self.backend == "dask" and value is not None:
            return self._client.scatter(value, broadcast=True, hash=False)
        return value

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
        between chunks, joblib and Dask by cancelling what is pending."""
        if self.backend == "dask":
            yield from self._dask(function, argument_lists)
        elif self.n_jobs == 1:
            for i, args in enumerate(argument_lists):
                yield i, function(*args)
        else:
            yield from self._loky(function, argument_lists)

    def _dask(self, function, argument_lists):
        from distributed import as_completed

        futures = [self._client.submit(function, *args, pure=False) for args in argument_lists]
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for future, result in as_completed(futures, with_results=True):
                i = index[future.key]
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
    chunk = int(chunk) if chunk else chunk_size_for(() if shape is None else shape, n)
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
