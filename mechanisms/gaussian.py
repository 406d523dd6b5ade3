"""The Gaussian mechanism f(D) + N(0, sigma^2 I) (Lu, Magdon-Ismail, Wei & Zikas 2023, NDIS,
Definition 9) and Gaussian LS, its OLS instance calibrated to the data's largest OLS sensitivity
(Lu et al. 2023, OLS-RP, Propositions 1-2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core.neighbors import ROW_RELATIONS
from ..core.validation import as_choice, as_data, as_positive, as_probability, one_setting, optional
from ..theory.gaussian_pair import GaussianLaw
from .base import Draw, Mechanism, noise_variance
from .gram import least_squares
from .neighbors import row_pair


def _ols(D: np.ndarray) -> np.ndarray:
    return least_squares(D).x


#: A query f of the Gaussian mechanism: the dataset D -> a real array.
Query = Callable[[np.ndarray], ArrayLike]
QUERIES: dict[str, Query] = {"sum": lambda D: D.sum(axis=0), "mean": lambda D: D.mean(axis=0), "ols": _ols}


class GaussianMechanism(Mechanism):
    name = "gaussian"
    summary = ("f(D) + N(0, sigma^2 I) for a query f: sum, mean, ols (D = [B, b]) or a callable (Lu et al. 2023, NDIS, "
               "Definition 9)")
    param_docs = {
        "query": "'sum', 'mean' (column sums/means), 'ols' (x_opt of D = [B, b]) or a callable D -> array",
        "sigma": "noise standard deviation (> 0); or give eps, delta and sensitivity instead",
        "eps": "target epsilon for the analytic calibration (> 0)",
        "delta": "target delta in (0, 1)",
        "sensitivity": "L2 sensitivity of the query under the declared neighbour relation (> 0)",
    }
    query: str | Query
    sigma: float | None
    eps: float | None
    delta: float | None
    sensitivity: float | None
    _noise: float

    def __init__(self, query: str | Query = "sum", sigma: float | None = None, eps: float | None = None,
                 delta: float | None = None, sensitivity: float | None = None) -> None:
        if not callable(query):
            as_choice("query", query, tuple(QUERIES))
        params: dict[str, Any] = {"query": query, "sigma": optional(as_positive, "sigma", sigma),
                                  "eps": optional(as_positive, "eps", eps),
                                  "delta": optional(as_probability, "delta", delta),
                                  "sensitivity": optional(as_positive, "sensitivity", sensitivity)}
        one_setting(self.name, params, ("sigma",), ("eps", "delta", "sensitivity"))
        if sigma is None:
            noise = float(theory.gaussian_sigma(params["eps"], params["delta"], params["sensitivity"]))
        else:
            noise = params["sigma"]
        self._set(params, _noise=noise)

    def noise_scale(self, D: np.ndarray) -> float:
        return self._noise

    def _value(self, D: np.ndarray) -> np.ndarray:
        f = QUERIES[self.query] if isinstance(self.query, str) else self.query
        value = np.asarray(f(D), dtype=float)
        if not np.all(np.isfinite(value)):
            raise ValueError("the query returned NaN or infinite values")
        return value

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return self._value(as_data(D)).shape

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        value, sigma = self._value(D), self.noise_scale(D)
        return (lambda k, rng: value + sigma * rng.standard_normal((k, *value.shape))), value.shape, max(value.size, 1)

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """One query evaluation and one noise draw per output, as the mechanism is defined."""
        shape, sigma = self._value(D).shape, self.noise_scale(D)

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            return np.stack([self._value(D) + sigma * rng.standard_normal(shape) for _ in range(k)])

        return draw, shape, max(int(np.prod(shape)), 1)

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """Exact: N(f(D), sigma^2 I) on the flattened output."""
        D = as_data(D)
        value = self._value(D).reshape(-1)
        return theory.GaussianLaw(value, noise_variance(self.noise_scale(D)) * np.eye(value.size), copies=1, exact=True)

    def spectrum_model(self, D: ArrayLike) -> tuple[str, dict[str, Any]] | None:
        """theory's closed form for the ols query (x_opt + N(0, sigma^2 I)); None for other queries."""
        return ("gaussian-ls", {"sigma": self.noise_scale(as_data(D))}) if self.query == "ols" else None

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """The row whose removal/zeroing moves f(D) the most: for sum, the largest row norm; for mean,
        the largest ||v_i - mean|| (remove: shift (v_i - mean)/(n-1)) or row norm (zero: v_i/n); for ols,
        the largest OLS sensitivity (Lu et al. 2023, OLS-RP, Propositions 7-9). None for a callable query or other
        relations."""
        relation = self._relation(relation)
        if callable(self.query) or relation not in ROW_RELATIONS:
            return None
        D = as_data(D)
        if self.query == "ols":
            return row_pair(D, theory.max_sensitivity_row(D), relation)
        rows = D - D.mean(axis=0) if (self.query, relation) == ("mean", "remove") else D
        return row_pair(D, int(np.argmax(np.einsum("ij,ij->i", rows, rows))), relation)


class GaussianLS(GaussianMechanism):
    name = "gaussian-ls"
    summary = ("Gaussian LS, x_opt + N(0, sigma^2 I_p), sigma from the data's max OLS sensitivity (relative DP; "
               "Lu et al. 2023, OLS-RP)")
    param_docs = {
        "eps": "target epsilon (> 0)",
        "delta": "target delta in (0, 1)",
        "sigma": "explicit noise standard deviation, instead of eps and delta (default None)",
        "calibration": "'analytic' (Balle & Wang 2018, as in Lu et al. 2023, NDIS, Table IV) or 'classic' (Dwork & "
                       "Roth 2014, as in OLS-RP)",
        "sensitivity": "OLS sensitivity bound; default None = max_i ||x_opt - x_opt(D minus i)|| of the data "
                       "(data-dependent: relative DP over D's neighbours)",
    }
    calibration: str

    def __init__(self, eps: float | None = None, delta: float | None = None, sigma: float | None = None,
                 calibration: str = "analytic", sensitivity: float | None = None) -> None:
        params: dict[str, Any] = {"eps": optional(as_positive, "eps", eps),
                                  "delta": optional(as_probability, "delta", delta),
                                  "sigma": optional(as_positive, "sigma", sigma),
                                  "calibration": as_choice("calibration", calibration, ("analytic", "classic")),
                                  "sensitivity": optional(as_positive, "sensitivity", sensitivity)}
        one_setting(self.name, {key: params[key] for key in ("sigma", "eps", "delta", "sensitivity")},
                    ("sigma",), ("eps", "delta"), optional_with={"sensitivity": 1})
        self._set(params, query="ols")

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        return as_data(D, min_cols=2)

    def _data_defaults(self, D: np.ndarray) -> dict[str, Any]:
        if self.sensitivity is None and self.sigma is None:
            return {"sensitivity": float(np.max(theory.ols_sensitivities(*theory.split_regression(D))))}
        return {}

    def noise_scale(self, D: np.ndarray) -> float:
        """sigma = s / c*(eps, delta) (analytic) or s sqrt(2 ln(1.25/delta)) / eps (classic; Dwork & Roth 2014,
        Theorem 3.22)."""
        if self.sigma is not None:
            return self.sigma
        assert self.eps is not None and self.delta is not None  # given when sigma is not (`one_setting`)
        s = self.sensitivity if self.sensitivity is not None else self._data_defaults(D)["sensitivity"]
        calibrate = theory.gaussian_sigma if self.calibration == "analytic" else theory.classic_gaussian_sigma
        return float(calibrate(self.eps, self.delta, s))
