"""Drawing mechanism outputs: plug-in adapters, seeded chunks, joblib / Dask execution.

Each adapter's `prepare(data)` returns draw(n, rng) for one dataset, with any data-dependent set-up
of the mechanism done once; every chunk of that dataset is drawn from it.

Samples are drawn in fixed-size chunks; chunk j of part `part` on side `side` uses the generator of
the SeedSequence child with spawn key (side, part, j) of the audit's root sequence (the same child
`SeedSequence.spawn` would give), and the chunk size depends only on the output size. So the
numbers are the same on 1 worker or 16, with loky or on a Dask cluster, and memory is bounded by
the chunk size times the number of workers: each task returns only its transformed chunk (e.g. the
scores of held-out samples, one float per sample).
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable

import numpy as np

from ndis.core.errors import MechanismError

BACKENDS = ("loky", "dask")
_CHUNK_BYTES = 32 * 2**20


def _repeat(function, data, n, rng):
    return np.stack([np.asarray(function(data, rng), dtype=float) for _ in range(n)])


class Batched:
    """Force a callable to be treated as batched: f(data, n, rng) -> array of shape (n, ...)."""

    kind = "batched"

    def __init__(self, function: Callable):
        self.function = function
        self.name = getattr(function, "__name__", "callable")

    def prepare(self, data) -> Callable:
        """draw(n, rng) = f(data, n, rng)."""
        return functools.partial(self.function, data)


class PerSample:
    """Force a callable to be treated as per-sample: f(data, rng) -> one output; batched by a loop."""

    kind = "per-sample"

    def __init__(self, function: Callable):
        self.function = function
        self.name = getattr(function, "__name__", "callable")

    def prepare(self, data) -> Callable:
        """draw(n, rng) = the n outputs f(data, rng), stacked."""
        return functools.partial(_repeat, self.function, data)


class MechanismSampler:
    """A mechanism object (mechanisms.base protocol); with literal=True its literal algorithm (as the
    paper writes it), e.g. as a control of the fast sampler."""

    def __init__(self, mechanism, literal: bool = False):
        if literal and not callable(getattr(mechanism, "sample_literal", None)):
            raise ValueError(f"{type(mechanism).__name__} has no sample_literal; literal=True needs one")
        self.mechanism, self.literal = mechanism, literal
        self.kind = "mechanism (literal)" if literal else "mechanism"
        self.name = getattr(mechanism, "name", type(mechanism).__name__)

    def prepare(self, data) -> Callable:
        """draw(n, rng) on `data`: the mechanism's `sampler(data, literal)`, whose data-dependent set-up
        (factorisation, noise calibration) is done here, once; objects without `sampler` fall back to
        `sample(data, n, rng)` (or `sample_literal`)."""
        sampler = getattr(self.mechanism, "sampler", None)
        if callable(sampler):
            return sampler(data, literal=self.literal)
        method = self.mechanism.sample_literal if self.literal else self.mechanism.sample
        return functools.partial(method, data)


def as_sampler(mech, literal: bool = False):
    """Adapt a mechanism object, a wrapper, or a plain callable (kind detected from its signature).

    A callable whose signature has three positional parameters, or a parameter named n / n_samples
    / size, is batched; one with two positional parameters is per-sample. Anything else raises a
    TypeError that names the wrappers `auditor.batched` / `auditor.per_sample`.
    """
    if isinstance(mech, (Batched, PerSample, MechanismSampler)):
        return mech
    if callable(getattr(mech, "sampler", None)) or callable(getattr(mech, "sample", None)):
        return MechanismSampler(mech, literal)
    if literal:
        raise ValueError("literal=True applies to mechanism objects with sample_literal, not to plain callables")
    if not callable(mech):
        raise TypeError(f"a mechanism must be a Mechanism object or a callable, got {type(mech).__name__}")
    try:
        parameters = list(inspect.signature(mech).parameters.values())
    except (TypeError, ValueError):
        parameters = None
    if parameters is not None:
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                      and p.default is p.empty]
        names = {p.name for p in parameters}
        if len(positional) == 3 or names & {"n", "n_samples", "size"}:
            return Batched(mech)
        if len(positional) == 2:
            return PerSample(mech)
    raise TypeError(
        "cannot tell whether the callable is batched f(data, n, rng) or per-sample f(data, rng) from its "
        "signature; wrap it as auditor.batched(f) or auditor.per_sample(f)"
    )


def chunk_seed(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The SeedSequence child of `root` with the given spawn key suffix, without mutating `root`."""
    return np.random.SeedSequence(entropy=root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key))


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """An int, None or SeedSequence as a SeedSequence (None draws fresh entropy, recorded in reports)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.SeedSequence(None if seed is None else int(seed))
    raise TypeError(f"seed must be an int, None or numpy.random.SeedSequence, got {type(seed).__name__}")


def validate_output(samples, n: int, shape: tuple | None, where: str) -> np.ndarray:
    """Check a mechanism's batch: an array of n finite samples, each of the expected shape."""
    try:
        samples = np.asarray(samples, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: the mechanism output is not a numeric array ({error})") from None
    if samples.ndim == 1:
        samples = samples[:, None]
    if samples.ndim == 0 or samples.shape[0] != n:
        raise ValueError(f"{where}: asked for {n} samples, the mechanism returned an array of shape {samples.shape}")
    if shape is not None and samples.shape[1:] != tuple(shape):
        raise ValueError(
            f"{where}: each sample should have shape {tuple(shape)}, the mechanism returned {samples.shape[1:]}"
        )
    if not np.all(np.isfinite(samples)):
        bad = int(np.sum(~np.all(np.isfinite(samples.reshape(n, -1)), axis=1)))
        raise ValueError(f"{where}: the mechanism returned NaN or infinite values in {bad} of {n} samples")
    return samples


def chunk_size_for(sample_shape: tuple, budget_bytes: int = _CHUNK_BYTES) -> int:
    """Samples per chunk so that one raw chunk takes about `budget_bytes` (between 256 and 2^18)."""
    per_sample = 8 * int(np.prod(sample_shape, dtype=np.int64) or 1)
    return int(np.clip(budget_bytes // per_sample, 256, 2**18))


def _draw(draw, n, seed_seq, shape, where, transform):
    rng = np.random.default_rng(seed_seq)
    try:
        raw = draw(n, rng)
    except Exception as error:  # the mechanism's own code failed: keep its traceback, say where
        raise MechanismError(where, error) from error
    samples = validate_output(raw, n, shape, where)
    return samples if transform is None else transform(samples)


class Executor:
    """Runs chunk tasks sequentially, on joblib (loky) workers, or on a Dask cluster; in order."""

    def __init__(self, n_jobs: int = 1, backend: str = "loky", scheduler=None, progress: bool = False):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
        if not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
            raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
        self.n_jobs, self.backend, self.scheduler, self.progress = int(n_jobs), backend, scheduler, progress
        self._client = self._cluster = None
        self._own_client = False

    def __enter__(self):
        if self.backend == "dask":
            from distributed import Client, LocalCluster

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
        if self.backend == "dask":
            return self._client.scatter(value, broadcast=True, hash=False)
        return value

    def map(self, function, argument_lists, desc: str):
        """[function(*args) for args in argument_lists], computed in parallel, results in order."""
        from tqdm.auto import tqdm

        bar = tqdm(total=len(argument_lists), desc=desc, disable=not self.progress, leave=False)
        try:
            if self.backend == "dask":
                futures = [self._client.submit(function, *args, pure=False) for args in argument_lists]
                for future in futures:
                    future.add_done_callback(lambda _: bar.update())
                return self._client.gather(futures)
            if self.n_jobs == 1:
                results = []
                for args in argument_lists:
                    results.append(function(*args))
                    bar.update()
                return results
            from joblib import Parallel, delayed

            results = []
            for result in Parallel(n_jobs=self.n_jobs, backend="loky", return_as="generator")(
                delayed(function)(*args) for args in argument_lists
            ):
                results.append(result)
                bar.update()
            return results
        finally:
            bar.close()


def draw(executor: Executor, draw_n: Callable, n: int, root: np.random.SeedSequence, key: tuple, chunk: int,
         shape, transform=None, desc: str = "sampling", name: str = "mechanism"):
    """n samples from `draw_n(k, rng)` (a prepared sampler) in chunks of `chunk`, chunk j seeded by
    key + (j,). Returns the concatenation of transform(chunk) (or of the raw validated chunks).

    The prepared sampler is shipped with the tasks (once per Dask worker), so its set-up is not
    repeated per chunk.
    """
    sizes = [min(chunk, n - start) for start in range(0, n, chunk)]
    where = f"{name} ({desc})"
    draw_n = executor.share(draw_n)
    tasks = [(draw_n, size, chunk_seed(root, *key, j), shape, where, transform) for j, size in enumerate(sizes)]
    return np.concatenate(executor.map(_draw, tasks, desc))
