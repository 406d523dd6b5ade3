"""Noise calibrations of the DP schemes: how large sigma is in the appended sigma*I rows.

Every DP scheme of Lu, Magdon-Ismail, Wei & Zikas (2023, OLS-RP; 2023, NDIS) and Showkatbakhsh,
Karakus & Diggavi (2018) regularises by appending sigma*I to the data and then runs RP or (sketched)
least squares; they differ only in the rule for sigma, collected here as mixins. The formulas live
in `theory` (one place); this module only decides which data quantities feed them. Data-dependent
defaults are marked: with C=None the row-norm bound is the dataset's own largest row norm, which is
what the papers' experiments did but is not a universe bound; for standard DP pass a true bound C.
`mech.fixed_for(D)` fixes every such default at its value on D, so that D and its neighbours are
then run by one and the same scheme (what an audit needs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import theory
from ..core.validation import (
    as_bool,
    as_leverage,
    as_positive,
    as_probability,
    max_row_norm,
    one_setting,
    optional,
    row_norm_bound,
)

_DOCS = {
    "eps": "target epsilon (> 0)",
    "delta": "target delta in (0, 1)",
    "C": "row-norm bound of the universe; default None = the dataset's largest row norm (data-dependent; not a bound "
         "for standard DP)",
    "tight": "use the tighter valid sigma = C sqrt(1/l* - 1) instead of the published C/sqrt(l*) (default false)",
    "sigma": "explicit noise scale, instead of eps and delta (default None)",
    "leverage": "leverage l_S of the database set; default None = max leverage of the data (data-dependent)",
    "residual": "residual share e_S of the database set; default None = max residual share of the data",
}


def _target(eps: float | None, delta: float | None, sigma: float | None, name: str,
            C: float | None = None) -> dict[str, float | None]:
    """Validated (eps, delta): both required, unless the scheme takes an explicit sigma instead (never
    both; nor sigma with the calibration's row-norm bound C)."""
    target = {"eps": optional(as_positive, "eps", eps), "delta": optional(as_probability, "delta", delta)}
    one_setting(name, {"sigma": sigma, **target, "C": C}, ("sigma",), ("eps", "delta"), optional_with={"C": 1})
    return target


class NoNoise:
    """No appended rows (sigma = 0): the inherent mechanism."""

    noise_docs: dict[str, str] = {}

    def noise_scale(self, D: np.ndarray) -> float:
        return 0.0


class _RowNormBound:
    """Schemes calibrated on a row-norm bound C, whose default is the data's largest row norm."""

    sigma: float | None = None
    C: float | None

    def _data_defaults(self, D: np.ndarray) -> dict[str, Any]:
        return {"C": max_row_norm(D)} if self.C is None and self.sigma is None else {}


class RPNoise(_RowNormBound):
    """M_RP (Lu et al. 2023, NDIS, Fig. 3, Theorem 3): sigma = C / sqrt(l*) (tight: C sqrt(1/l* - 1)),
    l* the leverage at which the RP spectrum reaches delta (`theory.rp_sigma`)."""

    noise_docs = {k: _DOCS[k] for k in ("eps", "delta", "C", "tight", "sigma")}
    name: str
    r: int
    eps: float | None          # None when sigma is given, else set (`_target`)
    delta: float | None
    tight: bool

    def _noise_params(self, eps: float | None = None, delta: float | None = None, C: float | None = None,
                      tight: bool = False, sigma: float | None = None) -> dict[str, Any]:
        return {**_target(eps, delta, sigma, self.name, C), "C": optional(as_positive, "C", C),
                "tight": as_bool("tight", tight), "sigma": optional(as_positive, "sigma", sigma)}

    def noise_scale(self, D: np.ndarray) -> float:
        if self.sigma is not None:
            return self.sigma
        assert self.eps is not None and self.delta is not None  # given when sigma is not (`_target`)
        return float(theory.rp_sigma(self.eps, self.delta, self.r, row_norm_bound(D, self.C), tight=self.tight))


class OLSNoise(_RowNormBound):
    """M_OLS / M_ALS (Lu et al. 2023, NDIS, Fig. 4, Theorem 5): the smallest sigma with
    phi(C^2/sigma^2, C^2/sigma^2) <= delta (`theory.ols_sigma`)."""

    noise_docs = {k: _DOCS[k] for k in ("eps", "delta", "C", "sigma")}
    name: str
    r: int
    eps: float | None          # None when sigma is given, else set (`_target`)
    delta: float | None

    def _noise_params(self, eps: float | None = None, delta: float | None = None, C: float | None = None,
                      sigma: float | None = None) -> dict[str, Any]:
        return {**_target(eps, delta, sigma, self.name, C), "C": optional(as_positive, "C", C),
                "sigma": optional(as_positive, "sigma", sigma)}

    def noise_scale(self, D: np.ndarray) -> float:
        if self.sigma is not None:
            return self.sigma
        assert self.eps is not None and self.delta is not None  # given when sigma is not (`_target`)
        p = D.shape[1] - 1
        return float(theory.ols_sigma(self.eps, self.delta, self.r, p, row_norm_bound(D, self.C)))


class SheffetNoise(_RowNormBound):
    """Sheffet (2019) (reference [15] of NDIS): c2 = sqrt(4 c1^2 (sqrt(2 r ln(4/delta)) + ln(4/delta)) / eps),
    c1 the row-norm bound (`theory.sheffet_c2`)."""

    noise_docs = {k: _DOCS[k] for k in ("eps", "delta", "C")}
    name: str
    r: int
    eps: float
    delta: float

    def _noise_params(self, eps: float | None = None, delta: float | None = None,
                      C: float | None = None) -> dict[str, Any]:
        return {**_target(eps, delta, None, self.name), "C": optional(as_positive, "C", C)}

    def noise_scale(self, D: np.ndarray) -> float:
        return float(theory.sheffet_c2(self.eps, self.delta, self.r, row_norm_bound(D, self.C)))


class ISIT18Noise:
    """Showkatbakhsh, Karakus & Diggavi (2018) (reference [17] of NDIS) as the NDIS code calibrates it:
    sigma^2 = (r / (2^{2 eps_MI} - 1) - f(D)^2)_+ with f over all columns (`theory.isit18_sigma`).
    The rule depends on the data through f(D), as the scheme prescribes (not fixed by `fixed_for`)."""

    noise_docs = {k: _DOCS[k] for k in ("eps", "delta")}
    name: str
    r: int
    eps: float
    delta: float

    def _noise_params(self, eps: float | None = None, delta: float | None = None) -> dict[str, Any]:
        return _target(eps, delta, None, self.name)

    def noise_scale(self, D: np.ndarray) -> float:
        return float(theory.isit18_sigma(self.eps, self.delta, self.r, theory.isit18_column_bound(D)))


class RPRelativeNoise(RPNoise):
    """M_RP^rel (Lu et al. 2023, NDIS, Fig. 12): no noise when l_S <= l*(eps, delta, r), else M_RP's sigma."""

    noise_docs = {k: _DOCS[k] for k in ("eps", "delta", "C", "leverage", "tight")}
    eps: float                 # required here (no sigma)
    delta: float
    leverage: float | None

    # the scheme's own parameters, for its __init__ (no sigma, a leverage): not the base class's
    def _noise_params(self, eps: float | None = None, delta: float | None = None,  # type: ignore[override]
                      C: float | None = None, leverage: float | None = None, tight: bool = False) -> dict[str, Any]:
        params = super()._noise_params(eps, delta, C, tight)
        del params["sigma"]
        return {**params, "leverage": optional(as_leverage, "leverage", leverage)}

    def noise_scale(self, D: np.ndarray) -> float:
        level = self.leverage if self.leverage is not None else self._data_defaults(D)["leverage"]
        if level <= theory.rp_leverage_threshold(self.eps, self.delta, self.r):
            return 0.0
        return super().noise_scale(D)

    def _data_defaults(self, D: np.ndarray) -> dict[str, Any]:
        found = super()._data_defaults(D)
        return {**found, "leverage": float(np.max(theory.leverages(D)))} if self.leverage is None else found


class OLSRelativeNoise(OLSNoise):
    """M_OLS^rel / M_ALS^rel (Lu et al. 2023, NDIS, Fig. 13, Theorem 6): no noise when phi(l_S, e_S) <= delta, else
    M_OLS's sigma. Default (l_S, e_S) = (max_i l_i, max_i e_i) of the data (as NDIS does; conservative
    under the monotonicity of phi, `theory.worst_rows`)."""

    noise_docs = {k: _DOCS[k] for k in ("eps", "delta", "C", "leverage", "residual")}
    eps: float                 # required here (no sigma)
    delta: float
    leverage: float | None
    residual: float | None

    def _noise_params(self, eps: float | None = None, delta: float | None = None, C: float | None = None,
                      leverage: float | None = None, residual: float | None = None) -> dict[str, Any]:
        params = super()._noise_params(eps, delta, C)
        del params["sigma"]
        return {**params, "leverage": optional(as_leverage, "leverage", leverage),
                "residual": optional(as_leverage, "residual", residual)}

    def noise_scale(self, D: np.ndarray) -> float:
        found = self._data_defaults(D)
        level = self.leverage if self.leverage is not None else found["leverage"]
        share = self.residual if self.residual is not None else found["residual"]
        p = D.shape[1] - 1
        if float(theory.als_delta(self.eps, level, share, self.r, p)) <= self.delta:
            return 0.0
        return super().noise_scale(D)

    def _data_defaults(self, D: np.ndarray) -> dict[str, Any]:
        found = super()._data_defaults(D)
        if self.leverage is None or self.residual is None:
            leverages, residuals = theory.leverage_residual(D)
            found.update({"leverage": float(np.max(leverages))} if self.leverage is None else {})
            found.update({"residual": float(np.max(residuals))} if self.residual is None else {})
        return found
