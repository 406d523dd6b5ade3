"""Google's differential-privacy library (through OpenMined's python-dp, `import pydp`) as ndis mechanisms.

Adapted: the numerical mechanisms `LaplaceMechanism` and `GaussianMechanism` applied to a bounded sum,
and the aggregations `BoundedSum`, `BoundedMean` and `Count` of `pydp.algorithms.laplacian`. A record
is one row of a (n, 1) dataset; the library's contribution bounds (`l0_sensitivity`,
`linf_sensitivity`, default 1) make its guarantee one for adding or removing a record, so D' is D
with one record removed (`neighbor = "remove"`), the record at the upper bound (the largest change).

The library draws its noise from its own secure generator, which cannot be seeded: the `rng` an
audit passes is not used, so an audit of these mechanisms is not reproducible from its seed (each
case's note says so). The calls run in Python, one output at a time. The library's Laplace outputs
lie on its granularity lattice (2^-40 Z here) for D and D' alike, so the floating-point support
attack on textbook Laplace (Mironov 2012) finds no output that only one side can produce.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from pydp.algorithms import laplacian, numerical_mechanisms as numerical

from . import LibraryCase

LIBRARY = "pydp"
UNSEEDED = "python-dp's noise cannot be seeded: the audit's seed does not reproduce it"
AGGREGATIONS = ("BoundedSum", "BoundedMean", "Count")
NUMERICAL = ("LaplaceMechanism", "GaussianMechanism")


class Aggregation:
    """f(data, n, rng): n independent results of `pydp.algorithms.laplacian.<name>(**options)` on the
    records data[:, 0] (`quick_result`, which spends the whole budget on each call); `rng` unused.
    `neighbor`: the relation the audit checks D' against (None: none, e.g. for a person's records)."""

    def __init__(self, name: str, neighbor: str | None = "remove", **options: Any) -> None:
        if name not in AGGREGATIONS:
            raise ValueError(f"unknown python-dp aggregation {name!r}; adapted: {', '.join(AGGREGATIONS)}")
        self.name, self.neighbor, self.options = name, neighbor, options
        self.__name__ = f"pydp.{name}"
        self.params = {"algorithm": name, **options}

    def __call__(self, data: ArrayLike, n: int, rng: np.random.Generator) -> np.ndarray:
        algorithm = getattr(laplacian, self.name)(**self.options)
        values = _records(data, int if self.options.get("dtype", "int") == "int" else float)
        return np.array([algorithm.quick_result(values) for _ in range(n)], dtype=float)


class NoisySum:
    """f(data, n, rng): n releases of `pydp`'s `<name>(**options).add_noise` on the sum of the records
    data[:, 0] clamped to [lower, upper]; `rng` unused."""

    neighbor = "remove"

    def __init__(self, name: str, lower: float = 0.0, upper: float = 1.0, **options: Any) -> None:
        if name not in NUMERICAL:
            raise ValueError(f"unknown python-dp numerical mechanism {name!r}; adapted: {', '.join(NUMERICAL)}")
        self.name, self.lower, self.upper, self.options = name, lower, upper, options
        self.__name__ = f"pydp.{name}"
        self.params = {"mechanism": name, "lower": lower, "upper": upper, **options}

    def __call__(self, data: ArrayLike, n: int, rng: np.random.Generator) -> np.ndarray:
        mechanism = getattr(numerical, self.name)(**self.options)
        total = float(np.clip(np.asarray(data, dtype=float)[:, 0], self.lower, self.upper).sum())
        return np.array([mechanism.add_noise(total) for _ in range(n)], dtype=float)


def _records(data: ArrayLike, kind: Callable[[Any], float]) -> list[float]:
    data = np.asarray(data)
    if data.ndim != 2 or data.shape[1] != 1:
        raise ValueError(f"python-dp adapters take a (n, 1) dataset of records, got shape {data.shape}")
    return [kind(v) for v in data[:, 0]]


#: A small dataset of records in [0, 1] (the sums' bounds); its last record, at the upper bound,
#: is the one removed to form D'.
D = np.array([[0.2], [0.5], [0.9], [0.4], [1.0]])
#: The same people as counts: one record each (Count takes integers).
D_COUNT = np.ones((5, 1))
#: The planted misuse's data: D plus two more records of the person whose record is last; D' is
#: D without that person's three records.
D_USER = np.vstack([D, [[1.0], [1.0]]])


def cases() -> list[LibraryCase]:
    """Each adapter at the (eps, delta) the library is configured with, the Laplace one also probed
    through its floating-point grid (features="float-grid"), plus one planted misuse:
    `BoundedSum` told each person contributes one record (linf_sensitivity=1) while one person
    contributes three, so the true epsilon is 3 times the claimed one."""
    eps, delta = 1.0, 1e-5
    bounds: dict[str, Any] = {"lower_bound": 0.0, "upper_bound": 1.0, "dtype": "float"}
    note = f"remove one record of a bounded sum in [0, 1]; {UNSEEDED}"
    laplace = NoisySum("LaplaceMechanism", epsilon=eps, sensitivity=1.0)
    gaussian = NoisySum("GaussianMechanism", epsilon=eps, delta=delta, sensitivity=1.0)
    used: list[tuple[str, NoisySum | Aggregation, np.ndarray, tuple[float, float], int, str]] = [
        ("LaplaceMechanism on a bounded sum", laplace, D, (eps, 0.0), 400_000, note),
        ("GaussianMechanism on a bounded sum", gaussian, D, (eps, delta), 400_000, note),
        ("BoundedSum", Aggregation("BoundedSum", epsilon=eps, **bounds), D, (eps, 0.0), 400_000, note),
        ("BoundedMean", Aggregation("BoundedMean", epsilon=eps, **bounds), D, (eps, 0.0), 100_000, note),
        ("Count", Aggregation("Count", epsilon=eps, dtype="int"), D_COUNT, (eps, 0.0), 400_000,
         f"remove one record; {UNSEEDED}"),
    ]
    listed = [LibraryCase(LIBRARY, name, mech, data, data[:-1], claimed, n_samples=n, note=text,
                          params=mech.params) for name, mech, data, claimed, n, text in used]
    listed.append(LibraryCase(
        LIBRARY, "LaplaceMechanism on a bounded sum, floating-point grid", laplace, D, D[:-1], (eps, 0.0),
        n_samples=100_000, params=laplace.params, features="float-grid",
        note=f"floating-point probe: sums 3 and 2 (added in floating point, q + noise reaches other doubles from "
             f"each, e.g. only multiples of 2^-51 in (1/2, 1) from 3); {UNSEEDED}"))
    # D and D' differ by one person's three records, not by one record: no one-record relation to check
    misuse = Aggregation("BoundedSum", neighbor=None, epsilon=eps, linf_sensitivity=1, **bounds)
    listed.append(LibraryCase(
        LIBRARY, "BoundedSum, contribution bound too small", misuse, D_USER, D_USER[:-3], (eps, 0.0), planted=True,
        n_samples=100_000, params=misuse.params,
        note=f"linf_sensitivity=1 while the removed person has 3 records: true eps = 3 x {eps:g}; {UNSEEDED}"))
    return listed
