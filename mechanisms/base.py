"""The Mechanism protocol: what every randomized mechanism of ndis provides.

A mechanism is a cheap immutable object: its parameters are validated in `__init__`; data enter
only through the methods (`sample`, `sample_literal`, `sampler`, `output_law`, `worst_neighbor`,
`fixed_for`). Subclasses provide the two samplers as "draw k outputs" closures (`_fast`,
`_literal`); this class checks the arguments and fills the result chunk by chunk, so that memory
stays bounded for any n.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ..core.neighbors import check_relation
from ..core.thread_pools import thread_limit
from ..core.validation import RngLike, as_data, as_int, as_rng

if TYPE_CHECKING:
    from ..theory.gaussian_pair import GaussianLaw

#: Floats drawn per chunk by the samplers (32 MB of float64).
CHUNK_FLOATS = 1 << 22

#: A sampler: k outputs drawn with a generator, shape (k, *output shape).
Draw = Callable[[int, np.random.Generator], np.ndarray]
#: A sampler as `Mechanism.sampler` returns it: the generator may also be an int seed or a SeedSequence.
Sampler = Callable[[int, RngLike], np.ndarray]
M = TypeVar("M", bound="Mechanism")

def noise_variance(sigma: float) -> float:
    """sigma^2 for an output law's covariance; a ValueError when it exceeds float64 (sigma beyond
    about 1.3e154), where the law cannot be written down although its outputs can be sampled."""
    with np.errstate(over="ignore"):
        variance = float(np.square(np.float64(sigma)))  # inf, not Python's OverflowError
    if not np.isfinite(variance):
        raise ValueError(f"the noise variance sigma^2 of sigma = {sigma:.4g} exceeds the float64 range, so the "
                         "output law cannot be represented; rescale the data (the auditor's scores do not depend "
                         "on the scale)")
    return variance


class Mechanism:
    """A randomized mechanism M: dataset D (n, d) -> output array of shape output_shape(D).

    Class attributes: `name` (registry name), `neighbor` (declared default neighbour relation),
    `summary` and `param_docs` (shown by `ndis mechanisms`), `thread_safe` (its samplers may run in
    several threads of one process at once: the auditor then samples on all cores by default; true of
    every mechanism here, whose samplers hold no state but the generator each chunk is given)."""

    name: str = ""
    neighbor: str = "remove"
    thread_safe: bool = True
    summary: str = ""
    param_docs: dict[str, str] = {}
    _params: dict[str, Any]

    # -- construction -------------------------------------------------------------------------
    def _set(self, params: dict[str, Any], **derived: Any) -> None:
        """Store the validated constructor parameters (reported by `params`) and derived values."""
        for key, value in {**params, **derived}.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_params", dict(params))

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable; use with_params({key}=...)")

    @property
    def params(self) -> dict[str, Any]:
        """The constructor parameters (for reports)."""
        return dict(self._params)

    def with_params(self: M, **changes: Any) -> M:
        """A copy with some parameters changed (validated again)."""
        unknown = sorted(set(changes) - set(self._params))
        if unknown:
            raise ValueError(f"{self.name} has no parameter(s) {unknown}; its parameters are {sorted(self._params)}")
        return type(self)(**{**self._params, **changes})

    def fixed_for(self: M, D: ArrayLike) -> M:
        """A copy whose data-dependent defaults (e.g. C=None -> the largest row norm of D) are fixed at
        their values on D, so that D and its neighbours are run by the same scheme."""
        return self.with_params(**self._data_defaults(self._check_data(D)))

    def _data_defaults(self, D: np.ndarray) -> dict[str, Any]:
        """{parameter: value on D} for the parameters left to a data-dependent default."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mechanism) and type(other) is type(self) and other._params == self._params

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in self._params.items()))))

    # -- sampling -----------------------------------------------------------------------------
    def sample(self, D: ArrayLike, n: int, rng: RngLike) -> np.ndarray:
        """n independent outputs M(D), shape (n, *output_shape(D)): exact in distribution, batched."""
        return self.sampler(D)(n, rng)

    def sample_literal(self, D: ArrayLike, n: int, rng: RngLike) -> np.ndarray:
        """n independent outputs of the algorithm exactly as the paper writes it (the reference)."""
        return self.sampler(D, literal=True)(n, rng)

    def sampler(self, D: ArrayLike, literal: bool = False) -> Sampler:
        """`lambda n, rng: self.sample(D, n, rng)` with the data-dependent set-up (factorisation,
        noise calibration) done once, for callers that draw many batches from one dataset."""
        D = self._check_data(D)
        draw, shape, cost = self._literal(D) if literal else self._fast(D)
        chunk = max(1, CHUNK_FLOATS // max(int(cost), 1))

        def run(n: int, rng: RngLike) -> np.ndarray:
            n = as_int("n", n, minimum=0)
            rng = as_rng(rng)
            out = np.empty((n, *shape))
            with thread_limit(1):  # small products: 2 BLAS threads were 2-100x slower per sample
                for start in range(0, n, chunk):
                    k = min(chunk, n - start)
                    out[start:start + k] = draw(k, rng)
            return out

        return run

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        return as_data(D)

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """(draw, output shape, floats drawn per sample) of the fast sampler."""
        raise NotImplementedError

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """(draw, output shape, floats drawn per sample) of the literal algorithm."""
        raise NotImplementedError

    # -- description of the output ------------------------------------------------------------
    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        raise NotImplementedError

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """The output law as a `theory.GaussianLaw` (exact or asymptotic, labelled), or None."""
        return None

    def features(self, samples: np.ndarray) -> np.ndarray:
        """The natural low-dimensional feature map for auditing, shape (n, k); here: flatten."""
        samples = np.asarray(samples, dtype=float)
        return samples.reshape(samples.shape[0], -1)

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """(row index, D') of the family's worst neighbouring pair under `relation`, or None."""
        return None

    def _relation(self, relation: str | None) -> str:
        """`relation`, or the declared default when None, checked against `core.neighbors.RELATIONS`."""
        return check_relation(self.neighbor if relation is None else relation)
