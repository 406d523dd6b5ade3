"""Plug-in adapters: a mechanism object, a batched or a per-sample callable as one sampler.

Each adapter's `prepare(data)` returns draw(n, rng) for one dataset, with any data-dependent set-up
of the mechanism done once; every chunk of that dataset is drawn from it (`sampling.chunks`).
`validate_output` checks what a mechanism returned and names the first bad call or sample.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable

import numpy as np


class _Calls(list):
    """The outputs of n successive calls of a per-sample mechanism, checked call by call."""


def _repeat(function, data, n, rng):
    return _Calls([function(data, rng) for _ in range(n)])


class Batched:
    """Force a callable to be treated as batched: f(data, n, rng) -> array of shape (n, ...).

    `exact`: the mechanism's known exact curve on the audit's pair, drawn beside the estimate: an
    array over the eps grid, a callable eps -> array, or one returning (forward, reverse)
    (`auditor.reporting.exact.exact_curve`)."""

    kind = "batched"
    thread_safe = False  # unknown: a plain callable is sampled in threads only when asked (backend="threads")

    def __init__(self, function: Callable, exact=None):
        self.function, self.exact = function, exact
        self.name = getattr(function, "__name__", "callable")

    def prepare(self, data) -> Callable:
        """draw(n, rng) = f(data, n, rng)."""
        return functools.partial(self.function, data)


class PerSample:
    """Force a callable to be treated as per-sample: f(data, rng) -> one output; batched by a loop.
    `exact`: the mechanism's known exact curve, as for `Batched`."""

    kind = "per-sample"
    thread_safe = False

    def __init__(self, function: Callable, exact=None):
        self.function, self.exact = function, exact
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
        self.thread_safe = getattr(mechanism, "thread_safe", False) is True
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


def resolve(mech):
    """A mechanism given by its registered name (`ndis.mechanisms.resolve`, default parameters), or
    `mech` itself."""
    if isinstance(mech, str):
        from ...mechanisms import resolve as by_name

        try:
            return by_name(mech)
        except ValueError as error:
            raise ValueError(f"{error} (the registered names are listed by ndis.mechanisms.names(); set parameters "
                             "with ndis.get_mechanism(name, **parameters))") from None
    return mech


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
    try:  # a functools.partial is read as the partial, never as the function it may claim to wrap
        parameters = list(inspect.signature(mech, follow_wrapped=not isinstance(mech, functools.partial))
                          .parameters.values())
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


def _numeric(value):
    """`value` as a float array, or None when it is not numbers (None, strings, ragged lists, objects)."""
    if value is None:
        return None
    try:
        array = np.asarray(value)
    except ValueError:  # a ragged sequence
        return None
    return array.astype(float, copy=False) if array.dtype.kind in "biuf" else None


def _describe(value) -> str:
    if value is None:
        return "None"
    items = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, (complex, np.complexfloating)) or isinstance(v, np.ndarray) and v.dtype.kind == "c"
           for v in items):
        return ("complex numbers (outputs must be real: return the real and imaginary parts as separate "
                "coordinates)")
    if isinstance(value, str):
        return f"the string {value[:30]!r}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of values of different lengths or types"
    return f"a {type(value).__name__}"


def _stack_calls(outputs: _Calls, shape, where: str, start: int) -> np.ndarray:
    """The outputs of per-sample calls as one array; a bad call is named by its index in the phase.

    The whole chunk is converted at once when it stacks into numbers of one shape (the expected one,
    if known); only otherwise are the calls checked one by one, to name the first bad one."""
    try:
        stacked = np.asarray(outputs)
    except (ValueError, TypeError):  # ragged (the outputs differ in shape) or not array-like
        stacked = None
    if stacked is not None and stacked.dtype.kind in "biuf" and stacked.ndim >= 1:
        stacked = stacked.reshape(len(outputs), -1) if stacked.ndim == 1 else stacked
        if shape is None or stacked.shape[1:] == tuple(shape):
            return stacked.astype(float, copy=False)
    expected, arrays = (None if shape is None else tuple(shape)), []
    for i, output in enumerate(outputs):
        array = _numeric(output)
        wanted = "numbers" if expected is None else f"an array of numbers of shape {expected}"
        if array is None:
            raise ValueError(f"{where}: call {start + i} returned {_describe(output)}; expected {wanted}")
        array = array.reshape(1) if array.ndim == 0 else array
        if expected is None:
            expected = array.shape
        elif array.shape != expected:
            raise ValueError(f"{where}: call {start + i} returned shape {array.shape}, earlier calls returned "
                             f"{expected}")
        arrays.append(array)
    return np.stack(arrays)


def validate_output(samples, n: int, shape: tuple | None, where: str, start: int = 0) -> np.ndarray:
    """Check a mechanism's batch: n finite numeric samples, each of the expected shape. `start` is the
    index of the batch's first sample in its phase (calls are named by it in the messages)."""
    if isinstance(samples, _Calls):
        samples = _stack_calls(samples, shape, where, start)
    else:
        array = _numeric(samples)
        if array is None:
            raise ValueError(f"{where}: the mechanism returned {_describe(samples)} for samples {start}.."
                             f"{start + n - 1}; expected an array of {n} numeric samples")
        samples = array
    if samples.ndim == 1:
        samples = samples[:, None]
    if samples.ndim == 0 or samples.shape[0] != n:
        raise ValueError(f"{where}: asked for {n} samples, the mechanism returned an array of shape {samples.shape}")
    if shape is not None and samples.shape[1:] != tuple(shape):
        raise ValueError(f"{where}: samples {start}..{start + n - 1} have shape {samples.shape[1:]}, earlier "
                         f"samples had {tuple(shape)}")
    finite = np.all(np.isfinite(samples.reshape(n, -1)), axis=1)
    if not np.all(finite):
        first = start + int(np.argmin(finite))
        raise ValueError(f"{where}: the mechanism returned NaN or infinite values in {int(np.sum(~finite))} of {n} "
                         f"samples (first: sample {first})")
    return samples
