"""diffprivlib (IBM) mechanisms and models as ndis mechanisms, and the uses audited at their documented eps.

`from_mechanism(cls, **params)` wraps a `diffprivlib.mechanisms` class: each sample randomises every
entry of the data (a vector of query answers), or, with `data_param` (e.g. "utility" for the
Exponential mechanism), the data is that constructor argument and a sample is `randomise()`.
`from_model(factory, attributes)` wraps an estimator: data = [X | y] (label in the last column), a
sample is the fitted attributes, flattened. diffprivlib takes `random_state`: a chunk of n samples
uses one `numpy.random.RandomState` seeded from the audit's rng, so audits are reproducible.

diffprivlib 0.6.6 imports `DOUBLE` and `DTYPE` from `sklearn.tree._tree`, which scikit-learn 1.9
removed; `_compatible_sklearn` restores those two aliases (float64 and float32, their values up to
1.8) before the import. Its LogisticRegression passes `multi_class`, which scikit-learn 1.9 rejects,
so the model audited is its GaussianNB (Vaidya, Shafiq, Basu & Hong 2013).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


def _compatible_sklearn() -> None:
    """Restore the two aliases diffprivlib 0.6.6 imports from sklearn.tree._tree (removed in 1.9)."""
    from sklearn.tree import _tree

    for alias, dtype in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(_tree, alias):
            setattr(_tree, alias, dtype)


_compatible_sklearn()

from diffprivlib import mechanisms as dpm  # noqa: E402
from diffprivlib.accountant import BudgetAccountant  # noqa: E402
from diffprivlib.models import GaussianNB  # noqa: E402

from . import LibraryCase  # noqa: E402


def _random_state(rng: np.random.Generator) -> np.random.RandomState:
    return np.random.RandomState(np.random.default_rng(rng).integers(2**32, dtype=np.uint64))


class MechanismAdapter:
    """A diffprivlib mechanism class with its parameters: `sample(data, n, rng)` -> (n, k) array.

    Without `data_param`, data is a vector of k query answers, each randomised by one mechanism
    instance (a sample is k independent draws); with it, the mechanism is built with
    `data_param=data` and a sample is `randomise()` (k = 1)."""

    neighbor = None

    def __init__(self, cls: Any, data_param: str | None = None, name: str | None = None, **params: Any) -> None:
        self.cls, self.data_param, self.params = cls, data_param, dict(params)
        self.name = name or f"diffprivlib {cls.__name__}"
        cls(**params, **({data_param: [0.0, 0.0]} if data_param else {}))  # invalid parameters fail here

    def sample(self, data: ArrayLike, n: int, rng: np.random.Generator) -> np.ndarray:
        state = _random_state(rng)
        if self.data_param:
            mech = self.cls(**self.params, **{self.data_param: np.asarray(data).ravel().tolist()}, random_state=state)
            return np.array([[mech.randomise()] for _ in range(n)], dtype=float)
        mech = self.cls(**self.params, random_state=state)
        cast = int if isinstance(mech, dpm.Geometric) else float
        values = [cast(v) for v in np.asarray(data).ravel()]
        return np.array([[mech.randomise(v) for v in values] for _ in range(n)], dtype=float)


class ModelAdapter:
    """A diffprivlib estimator: `sample(data, n, rng)` fits `factory(random_state, accountant)` to
    X = data[:, :-1], y = data[:, -1] and returns its `attributes`, flattened and concatenated."""

    def __init__(self, factory: Callable[[np.random.RandomState, Any], Any], attributes: Iterable[str], name: str,
                 neighbor: str | None = None, params: dict[str, Any] | None = None) -> None:
        self.factory, self.attributes, self.name = factory, tuple(attributes), name
        self.neighbor, self.params = neighbor, dict(params or {})

    def sample(self, data: ArrayLike, n: int, rng: np.random.Generator) -> np.ndarray:
        data = np.asarray(data, dtype=float)
        X, y = data[:, :-1], data[:, -1]
        state = _random_state(rng)
        out = []
        for _ in range(n):
            model = self.factory(state, BudgetAccountant()).fit(X, y)  # a fresh accountant: no budget runs out
            out.append(np.concatenate([np.ravel(getattr(model, a)) for a in self.attributes]))
        return np.array(out, dtype=float)


def from_mechanism(cls: Any, data_param: str | None = None, **params: Any) -> MechanismAdapter:
    """A `diffprivlib.mechanisms` class with its parameters (epsilon, delta, sensitivity, ...) as an ndis
    mechanism (see `MechanismAdapter`)."""
    return MechanismAdapter(cls, data_param, **params)


def from_model(factory: Callable[[np.random.RandomState, Any], Any], attributes: Iterable[str],
               name: str = "diffprivlib model", neighbor: str | None = None,
               params: dict[str, Any] | None = None) -> ModelAdapter:
    """An estimator `factory(random_state, accountant)` as an ndis mechanism whose output is the fitted
    `attributes` (see `ModelAdapter`)."""
    return ModelAdapter(factory, attributes, name, neighbor, params)


def naive_bayes(epsilon: float = 1.0, bounds: tuple[float, float] = (0.0, 1.0)) -> ModelAdapter:
    """diffprivlib's GaussianNB (eps-DP, Vaidya et al. 2013): output = class means, variances and counts."""
    def factory(state: np.random.RandomState, accountant: Any) -> Any:
        return GaussianNB(epsilon=epsilon, bounds=bounds, random_state=state, accountant=accountant)

    return from_model(factory, ("theta_", "var_", "class_count_"), "diffprivlib GaussianNB", "replace",
                      {"epsilon": epsilon, "bounds": bounds})


def _toy_data() -> np.ndarray:
    """Ten rows of one feature in [0, 1] and a binary label (last column)."""
    x = np.array([0.1, 0.3, 0.2, 0.4, 0.35, 0.9, 0.7, 0.8, 0.6, 0.5])
    return np.column_stack([x, (np.arange(10) >= 5).astype(float)])


def cases() -> list[LibraryCase]:
    """Laplace, Gaussian, GaussianAnalytic, Geometric, Exponential and GaussianNB at the eps (and
    delta) passed, on pairs their sensitivity covers; Laplace and GaussianAnalytic probed through their
    floating-point grid (features="float-grid"); one planted misuse (Laplace told sensitivity 1 on a
    query that moves by 2)."""
    pair = (np.array([0.0]), np.array([1.0]))
    uses: list[tuple[str, Any, dict[str, Any], int]] = [
        ("laplace", dpm.Laplace, dict(epsilon=1.0, sensitivity=1.0), 200_000),
        ("gaussian", dpm.Gaussian, dict(epsilon=0.5, delta=1e-5, sensitivity=1.0), 200_000),
        ("gaussian analytic", dpm.GaussianAnalytic, dict(epsilon=1.0, delta=1e-5, sensitivity=1.0), 200_000),
        ("geometric", dpm.Geometric, dict(epsilon=1.0, sensitivity=1), 200_000)]
    out: list[LibraryCase] = []
    for name, cls, params, n in uses:
        D, D_prime = (pair[0].astype(int), pair[1].astype(int)) if cls is dpm.Geometric else pair
        out.append(LibraryCase("diffprivlib", name, MechanismAdapter(cls, name=f"diffprivlib {name}", **params), D,
                               D_prime, (params["epsilon"], params.get("delta", 0.0)), n_samples=n,
                               note="query answers differing by the sensitivity passed", params=params))
    for name, cls, params in (("laplace", dpm.Laplace, uses[0][2]),
                              ("gaussian analytic", dpm.GaussianAnalytic, uses[2][2])):
        out.append(LibraryCase("diffprivlib", f"{name}, floating-point grid",
                               MechanismAdapter(cls, name=f"diffprivlib {name}", **params), np.array([1.0]),
                               np.array([2.0]), (params["epsilon"], params.get("delta", 0.0)), n_samples=100_000,
                               features="float-grid", params=params,
                               note="floating-point probe: answers 1 and 2 (value - scale * noise, in floating point, "
                                    "reaches other doubles near 1 than near 2; Holohan & Braghin 2021's sampler "
                                    "protects the noise, not the addition)"))
    exponential: dict[str, Any] = dict(epsilon=1.0, sensitivity=1.0)
    out.append(LibraryCase(
        "diffprivlib", "exponential", MechanismAdapter(dpm.Exponential, "utility", "diffprivlib exponential",
                                                       **exponential),
        np.eye(10)[0], 1.0 - np.eye(10)[0], (1.0, 0.0), n_samples=200_000,
        note="10 candidates, utilities (1, 0, ..., 0) -> (0, 1, ..., 1): each moved by the sensitivity (1); true eps "
             "of this pair 0.90", params=exponential))
    D = _toy_data()
    D_prime = D.copy()
    D_prime[0, 0] = 1.0
    out.append(LibraryCase(
        "diffprivlib", "GaussianNB", naive_bayes(), D, D_prime, (1.0, 0.0), n_samples=10_000,
        note="10 rows, one feature in [0, 1], 2 classes; D' replaces row 0's feature 0.1 by 1, same label (the model "
             "uses the true n and its own class split, so n and labels are treated as public); output: theta_, var_, "
             "class_count_; 10,000 fits per side", params={"epsilon": 1.0}))
    planted: dict[str, Any] = dict(epsilon=1.0, sensitivity=1.0)
    out.append(LibraryCase("diffprivlib", "laplace, wrong sensitivity",
                           MechanismAdapter(dpm.Laplace, name="diffprivlib laplace", **planted),
                           np.array([0.0]), np.array([2.0]), (1.0, 0.0), planted=True, n_samples=100_000,
                           note="planted: sensitivity=1 passed for a query whose answers differ by 2 (true eps = 2)",
                           params={**planted, "true sensitivity": 2.0}))
    return out
