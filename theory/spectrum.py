"""Dataset-level privacy spectra: the worst neighbouring pair of a dataset and its exact curve.

A spectrum is the pointwise maximum over the dataset's neighbours D' (and both orders of the pair) of
delta_{M(D)||M(D')}(eps) (the privacy spectrum of Lu, Magdon-Ismail, Wei & Zikas 2023, NDIS; the
privacy profile of Balle, Barthe & Gaboardi 2020). For the closed-form families the scan over all
n rows is vectorised: `theory.worst_rows` gives the candidate rows of ``rp`` / ``rlc`` (NDIS,
Theorem 2), ``als`` (NDIS, Theorem 4) and ``gaussian-ls`` (x_opt + N(0, sigma^2 I); Lu et al. 2023,
OLS-RP, Proposition 1).

``ridge`` > 0 means the mechanism runs on [D; ridge I] (M_RP, M_OLS, M_ALS, Sheffet's scheme): the
appended rows are public and never removed. The ``remove`` and ``zero`` relations give the same
spectrum for all these schemes (derived here: their output laws depend on D only through sums over
rows, to which a zero row adds nothing). Any other mechanism with an ``output_law`` is handled
generically through `GaussianPair`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..core.curve import Curve
from ..core.neighbors import ROW_RELATIONS, check_relation, make
from ..core.validation import as_data, as_eps_grid
from .als import als_delta, als_log_delta_ceiling, als_pair
from .gaussian import gaussian_delta
from .gaussian_pair import GaussianPair
from .leverage import ols_sensitivities, split_regression
from .profile import PrivacyProfile, WorstCase
from .rp import rp_delta, rp_pair
from .worst_rows import data_leverages, leverage_residual, max_leverage_row, max_sensitivity_row, pareto_frontier

FAMILIES = ("rp", "rlc", "als", "gaussian-ls")
#: The rows a spectrum scans: "worst", "all", a row index or row indices.
Rows = str | int | Sequence[int] | np.ndarray
#: (forward, reverse, row) per eps of a scan (`_scan`), its details, exactness and the rows scanned.
_Scanned = tuple[tuple[np.ndarray, ...], dict[str, Any], bool, np.ndarray]


@dataclass(frozen=True)
class Spectrum(Curve):
    """The curve (forward, reverse, delta = their max) of the worst neighbouring pair, per eps."""

    row: np.ndarray                      # index of the worst removed row, per eps
    neighbor: str
    mechanism: str
    exact: bool                          # False when the curve is that of an asymptotic normal law
    details: dict[str, Any] = field(default_factory=dict)  # the family's parameters; each candidate row's leverage,
    # residual share or sensitivity (`worst_details`: the worst row's, per eps)
    candidates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))  # rows scanned
    # their pairs (generic mechanisms)
    candidate_pairs: tuple[PrivacyProfile, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "row", np.asarray(self.row))
        object.__setattr__(self, "candidates", np.asarray(self.candidates, dtype=int).reshape(-1))

    @property
    def worst_row(self) -> int:
        """The row that is worst at the most eps grid points."""
        values, counts = np.unique(self.row, return_counts=True)
        return int(values[np.argmax(counts)])

    @property
    def worst_details(self) -> dict[str, Any]:
        """`details` with each candidate row's values (lists as long as `candidates`) replaced by the
        worst row's value at each eps, like `row`: what theory.json records (a list per eps, not one
        per scanned row, which is 327,346 for rows="all" on flights)."""
        order = np.argsort(self.candidates, kind="stable")
        at = order[np.searchsorted(self.candidates, self.row, sorter=order)] if self.candidates.size else None
        return {k: ([v[i] for i in at] if isinstance(v, list) and at is not None and len(v) == self.candidates.size
                    else v)
                for k, v in self.details.items()}

    def pairs(self) -> list[tuple[int, PrivacyProfile]]:
        """[(row, pair)]: the Gaussian pair (M(D), M(D minus row)) of every candidate row, as a
        `theory.profile.PrivacyProfile` (the asymptotic law's pair where `exact` is False): `rp_pair`,
        `als_pair` or the analytic Gaussian of the closed forms, the mechanism's own laws otherwise.
        The spectrum is their maximum; meant for the few rows of rows="worst"."""
        if self.candidate_pairs:
            return list(zip(self.candidates.tolist(), self.candidate_pairs, strict=True))
        d = self.details
        made: list[PrivacyProfile]
        if self.mechanism in ("rp", "rlc"):
            r = 1 if self.mechanism == "rlc" else int(d["r"])
            made = [rp_pair(lev, r) for lev in d["leverage"]]
        elif self.mechanism == "als":
            made = [als_pair(lev, res, int(d["r"]), int(d["p"]))
                    for lev, res in zip(d["leverage"], d["residual"], strict=True)]
        else:
            made = [GaussianPair([s / float(d["sigma"])], [[1.0]], [0.0], [[1.0]]) for s in d["sensitivity"]]
        return list(zip(self.candidates.tolist(), made, strict=True))

    def profile(self) -> PrivacyProfile:
        """The spectrum at every eps, both directions: the worst candidate row's pair in each direction
        (`theory.profile.WorstCase`), or that pair itself when there is one candidate."""
        made = [pair for _, pair in self.pairs()]
        if not made:
            raise ValueError("this spectrum has no candidate rows")
        return made[0] if len(made) == 1 else WorstCase(made)

    def to_pld(self, discretization: float = 1e-4, **options: Any) -> Any:
        """A pessimistic dp_accounting PrivacyLossDistribution of the spectrum (REMOVE = forward, ADD =
        reverse): `profile().to_pld(...)`, see `theory.profile` for its discretization error."""
        return self.profile().to_pld(discretization, **options)


def _select(rows: Rows, candidates: np.ndarray, n: int) -> np.ndarray:
    """The rows to evaluate: the family's candidates for "worst", else the requested ones."""
    if isinstance(rows, str):
        if rows == "worst":
            return candidates
        if rows == "all":
            return np.arange(n)
        raise ValueError(f"rows must be 'worst', 'all', an index or a list of indices, got {rows!r}")
    chosen = np.atleast_1d(np.asarray(rows))
    if chosen.dtype.kind not in "iu" or np.any((chosen < 0) | (chosen >= n)):
        raise ValueError(f"row indices must be integers in [0, {n}), got {rows!r}")
    return chosen


_CHUNK_POINTS = 2048     # (row, eps) points per vectorised block of a scan: bounds its memory


def _max_over_rows(eps: np.ndarray, rows: np.ndarray, forward: np.ndarray,
                   reverse: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(forward, reverse, row) per eps of the row (axis 0) whose curve max(forward, reverse) is largest."""
    worst = np.argmax(Curve(np.broadcast_to(eps, forward.shape), forward, reverse).delta, axis=0)
    columns = np.arange(eps.size)
    return forward[worst, columns], reverse[worst, columns], rows[worst]


def _scan(eps: np.ndarray, rows: np.ndarray, curves: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
          ceiling: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[np.ndarray, ...]:
    """`_max_over_rows` over `rows` in blocks of about _CHUNK_POINTS (row, eps) points, keeping
    only the running maximum: memory bounded whatever the number of rows. curves(block) gives
    (forward, reverse) of shape (block size, eps size); ties keep the first row, as argmax does.

    With `ceiling` (block -> upper bounds of ln max(forward, reverse), shape (block size, eps
    size)), only the rows that can be the worst at some eps are evaluated
    (`_rows_that_can_be_worst`); the result is the full scan's, row and ties included."""
    if ceiling is not None and rows.size > _SEED_ROWS:
        rows = _rows_that_can_be_worst(eps, rows, curves, ceiling)
    step = max(1, _CHUNK_POINTS // eps.size)
    best = None
    for start in range(0, rows.size, step):
        block = rows[start:start + step]
        fwd, rev, row = _max_over_rows(eps, block, *curves(block))
        if best is None:
            best = [fwd, rev, row]
            continue
        better = np.maximum(fwd, rev) > np.maximum(best[0], best[1])
        for kept, new in zip(best, (fwd, rev, row), strict=True):
            kept[better] = new[better]
    assert best is not None, "no rows to scan"
    return tuple(best)


_SEED_ROWS = 8           # rows of the largest ceilings per eps, evaluated first by a pruned scan
_LOG_TINY = np.log(np.finfo(float).tiny)   # below e^-708.4 a delta is subnormal: rounding can tie rows
_LOG_ZERO = -746.0                          # e^x is 0.0 below about -745.1: such rows tie at 0


def _rows_that_can_be_worst(eps: np.ndarray, rows: np.ndarray,
                            curves: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                            ceiling: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The rows (in their order) that can be the worst at some eps: the `_SEED_ROWS` rows of the
    largest ceilings at each eps are evaluated, and a row is kept where its ceiling reaches the
    largest ln delta m they found, less 1e-6 (far beyond the 1e-9 relative accuracy of the curves).
    A row skipped has delta < e^{m - 1e-6} < the maximum at every eps, so it can neither be the
    worst nor tie with it. Where m is below the normal range (a subnormal or zero delta, whose
    rounding can tie rows), every row whose delta is not exactly 0.0 is kept (ceiling >= -746), and
    the first row, which wins a tie at 0. The ceilings take 8 bytes per (row, eps) point."""
    step = max(1, 64 * _CHUNK_POINTS // eps.size)
    bound = np.concatenate([ceiling(rows[start:start + step]) for start in range(0, rows.size, step)])
    seeds = np.unique(np.argsort(-bound, axis=0, kind="stable")[:_SEED_ROWS].ravel())
    forward, reverse = curves(rows[seeds])
    with np.errstate(divide="ignore"):
        reached = np.log(np.max(np.maximum(forward, reverse), axis=0))
    keep = np.any(bound >= np.where(reached >= _LOG_TINY, reached - 1e-6, _LOG_ZERO), axis=1)
    keep[seeds] = True
    keep[0] = True
    return rows[keep]


def _rp(D: np.ndarray, eps: np.ndarray, rows: Rows, r: int, ridge: float) -> _Scanned:
    lev = data_leverages(D, ridge)
    chosen = _select(rows, np.array([max_leverage_row(D, ridge)]), D.shape[0])

    def curves(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        forward, reverse = (np.asarray(rp_delta(eps[None, :], lev[block, None], r, d)) for d in ("forward", "reverse"))
        return forward, reverse

    return _scan(eps, chosen, curves), {"leverage": lev[chosen].tolist()}, True, chosen


def _als(D: np.ndarray, eps: np.ndarray, rows: Rows, r: int, ridge: float, exact: bool) -> _Scanned:
    lev, res = leverage_residual(D, ridge)
    chosen = _select(rows, pareto_frontier(lev, res), D.shape[0])
    p = D.shape[1] - 1

    def curves(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        forward, reverse = (np.asarray(als_delta(eps[None, :], lev[block, None], res[block, None], r, p, d))
                            for d in ("forward", "reverse"))
        return forward, reverse

    def ceiling(block: np.ndarray) -> np.ndarray:
        bound = als_log_delta_ceiling(eps[None, :], lev[block, None], res[block, None], r, p)
        return bound.reshape(block.size, eps.size)

    details = {"leverage": lev[chosen].tolist(), "residual": res[chosen].tolist(), "p": p}
    return _scan(eps, chosen, curves, ceiling), details, exact, chosen


def _gaussian_ls(D: np.ndarray, eps: np.ndarray, rows: Rows, sigma: float) -> _Scanned:
    sens = ols_sensitivities(*split_regression(D))
    chosen = _select(rows, np.array([max_sensitivity_row(D)]), D.shape[0])

    def curves(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        curve = np.asarray(gaussian_delta(eps[None, :], sens[block, None] / sigma))
        return curve, curve

    return _scan(eps, chosen, curves), {"sensitivity": sens[chosen].tolist()}, True, chosen


def _generic(mechanism: object, D: np.ndarray, eps: np.ndarray, rows: Rows,
             neighbor: str) -> tuple[tuple[np.ndarray, ...], dict[str, Any], bool, np.ndarray, list[GaussianPair]]:
    """Any mechanism with output_law(D): exact GaussianPair on the requested or worst pair(s)."""
    if not hasattr(mechanism, "output_law"):
        raise ValueError(f"mechanism {mechanism!r} has no closed form here and no output_law")
    law = mechanism.output_law(D)
    if law is None:
        raise ValueError(f"mechanism {getattr(mechanism, 'name', mechanism)!r} has no Gaussian output law")
    if isinstance(rows, str) and rows == "worst":
        found = mechanism.worst_neighbor(D, neighbor) if hasattr(mechanism, "worst_neighbor") else None
        if found is None:
            raise ValueError("rows='worst' needs a mechanism with a worst_neighbor helper; pass row indices")
        pairs = [found]
    else:
        pairs = [(int(i), make(D, neighbor, int(i))) for i in _select(rows, np.arange(0), D.shape[0])]
    fwd: list[float | np.ndarray] = []
    rev: list[float | np.ndarray] = []
    made: list[GaussianPair] = []
    for _, neighbour_data in pairs:
        pair = GaussianPair.from_laws(law, mechanism.output_law(neighbour_data))
        fwd.append(pair.delta(eps))
        rev.append(pair.reverse().delta(eps))
        made.append(pair)
    chosen = np.array([i for i, _ in pairs])
    exact = bool(getattr(law, "exact", True))
    return _max_over_rows(eps, chosen, np.array(fwd), np.array(rev)), {}, exact, chosen, made


def _family(mechanism: object, D: np.ndarray, params: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(family name, parameters) of a family name, or of a mechanism object's `spectrum_model(D)`
    (its closed form with the noise scale calibrated on D and held fixed for every neighbour)."""
    if isinstance(mechanism, str):
        return mechanism, params
    if hasattr(mechanism, "spectrum_model"):
        model = mechanism.spectrum_model(D)
        if model is not None:
            return model
    return None, params


def spectrum(mechanism: object, D: ArrayLike, eps: ArrayLike, neighbor: str = "remove", rows: Rows = "worst",
             **params: Any) -> Spectrum:
    """The exact (or asymptotic, labelled) privacy spectrum of `mechanism` on dataset D.

    mechanism: a family name ("rp", "rlc", "als", "gaussian-ls") with its parameters as keywords
    (r, ridge, sigma; for "als" also exact=True when the output IS that normal, as for M_OLS), or a
    mechanism object: one whose ``spectrum_model(D)`` returns (family, params) uses the closed
    forms, any other needs ``output_law`` (and ``worst_neighbor`` for rows="worst"). rows: "worst"
    (default), "all", or row indices. eps: a grid of finite values (negative allowed,
    `core.validation.as_eps_grid`). The result is a `core.curve.Curve`: forward and reverse of the
    worst chosen row per eps, and delta = their maximum.
    """
    D = as_data(D)
    eps = as_eps_grid(eps)
    family, params = _family(mechanism, D, dict(params))
    name = family if family is not None else getattr(mechanism, "name", type(mechanism).__name__)
    made: Sequence[PrivacyProfile] = ()
    if family is None:
        check_relation(neighbor)
        (fwd, rev, row), details, exact, chosen, made = _generic(mechanism, D, eps, rows, neighbor)
    else:
        if family not in FAMILIES:
            raise ValueError(f"unknown mechanism family {family!r}; closed forms exist for {FAMILIES}")
        if neighbor not in ROW_RELATIONS:
            raise ValueError(f"the {family} closed form covers the neighbour relations {ROW_RELATIONS}, "
                             f"not {neighbor!r}")
        ridge = float(params.get("ridge", 0.0))
        if family in ("rp", "rlc"):
            r = 1 if family == "rlc" else int(params.get("r", 0))
            if r < 1:
                raise ValueError("rp needs the number of projections r >= 1")
            result = _rp(D, eps, rows, r, ridge)
        elif family == "als":
            r = int(params.get("r", 0))
            if r <= D.shape[1] - 1:
                raise ValueError(f"ALS needs a sketch size r > p = {D.shape[1] - 1}, got r={r}")
            result = _als(D, eps, rows, r, ridge, bool(params.get("exact", False)))
        else:
            sigma = float(params.get("sigma", 0.0))
            if sigma <= 0:
                raise ValueError("gaussian-ls needs a noise scale sigma > 0")
            result = _gaussian_ls(D, eps, rows, sigma)
        (fwd, rev, row), details, exact, chosen = result
        details.update({k: v for k, v in params.items()})
    return Spectrum(eps, fwd, rev, row, neighbor, name, exact, details, chosen, tuple(made))
