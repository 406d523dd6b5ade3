"""Composition of privacy profiles: exact for Gaussian pairs, through privacy-loss distributions otherwise.

The independent releases M_1(D), ..., M_k(D) have the product laws P_1 x ... x P_k and
Q_1 x ... x Q_k, and the privacy loss of the product is the sum of the parts' losses. For pairs of
Gaussians the product is one larger, block-diagonal pair of Gaussians, whose loss is the quadratic form
made of all the parts' terms (`theory.gaussian_pair`): `compose` adds them up, merges equal weights,
and evaluates the result by the same saddle-point integral, exactly, with no discretization. A part
whose pair depends on which row is removed (a `Spectrum` with several candidate rows) composes row by
row: k releases of one mechanism on D remove the same row from every release, so the composed
spectrum is the maximum over candidate rows of the composed pairs (`WorstCase`); parts with several
candidate rows each are combined over every choice of rows (an upper bound unless the rows agree).

Any other part (a Poisson-subsampled profile, a dp_accounting DpEvent or PrivacyLossDistribution)
makes the composition go through dp_accounting's privacy-loss distributions: the exact Gaussian
product is turned into one pessimistic PLD (`PrivacyProfile.to_pld`), every other part too, and the
PLDs are convolved (dp_accounting's `compose` / `self_compose`, which move truncated tail mass onto
the infinite loss, pessimistically). The composition of pessimistic PLDs is pessimistic (Zhu, Dong &
Wang 2022, Theorem 10: dominating pairs compose), so the result's delta is >= the exact one; its
eps(delta) exceeds the exact one by at most `eps_error`, the sum over parts of count x the largest
support gap of the part's PLD (`theory.profile`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .gaussian_pair import GaussianLosses, QuadraticLossProfile, group_terms, reversed_loss
from .pld import event_parts, from_pld, is_dp_accounting, pmfs
from .profile import PrivacyProfile, WorstCase, dp_accounting_modules
from .quadratic_loss import QuadraticLoss
from .spectrum import Spectrum

#: Largest number of row combinations composed exactly (parts with several candidate rows).
MAX_COMBINATIONS = 256


def product(parts: Sequence[tuple[QuadraticLossProfile, int]]) -> GaussianLosses:
    """The product of independent Gaussian pairs [(profile, count)]: one pair whose losses hold every
    part's terms, count times (derived here from the block-diagonal pair's eigen-decomposition, which
    is the union of the blocks'); the product is again a Gaussian pair, so its reverse loss is
    `reversed_loss` of the forward one (term by term, without a second eigen-decomposition)."""
    forward = _sum_of_losses([(p.loss, c) for p, c in parts])
    squares = [c * p._mu**2 for p, c in parts if p._mu is not None]
    mu = float(np.sqrt(sum(squares))) if len(squares) == len(parts) else None
    count = sum(c for _, c in parts)
    return GaussianLosses(forward, reversed_loss(forward), mu,
                          f"product of {count} Gaussian pair{'s' if count > 1 else ''}")


def _sum_of_losses(parts: Sequence[tuple[QuadraticLoss | None, int]]) -> QuadraticLoss | None:
    """The loss of independent parts [(one-row QuadraticLoss or None, count)]: terms side by side
    (equal weights merged), offsets and normal variances added; None (delta = 1) if any part is."""
    losses = [(loss, count) for loss, count in parts if loss is not None]
    if len(losses) < len(parts):
        return None
    weight = np.concatenate([loss.weight[0] for loss, _ in losses])
    dof = np.concatenate([c * loss.dof[0] for loss, c in losses])
    linear = np.concatenate([c * loss.linear[0] for loss, c in losses])
    weight, dof, linear, tol = group_terms(weight, dof, linear)
    offset = sum(c * float(loss.offset[0]) for loss, c in losses)
    normal_var = sum(c * float(loss.normal_var[0]) for loss, c in losses)
    return QuadraticLoss.build(weight[None, :], dof[None, :], linear[None, :], offset=offset,
                               normal_var=normal_var, zero_tol=tol)


def _as_profiles(part: object, discretization: float) -> list[tuple[PrivacyProfile, int]]:
    """[(profile, count)] of one argument of `compose`."""
    if isinstance(part, Spectrum):
        return [(part.profile(), 1)]
    if isinstance(part, PrivacyProfile):
        return [(part, 1)]
    if is_dp_accounting(part):
        return event_parts(part, discretization)
    raise TypeError(f"compose takes privacy profiles (GaussianPair, Spectrum, the results of compose and "
                    f"poisson_subsample), dp_accounting DpEvents and PrivacyLossDistributions; got "
                    f"{type(part).__name__}")


def _alternatives(profile: PrivacyProfile) -> list[QuadraticLossProfile] | None:
    """The Gaussian pairs among which the part's worst case is taken, or None when it is not Gaussian."""
    if isinstance(profile, QuadraticLossProfile):
        return [profile]
    if isinstance(profile, WorstCase):
        members = [m for m in profile.members if isinstance(m, QuadraticLossProfile)]
        if len(members) == len(profile.members):
            return members
    return None


def compose(*parts: object, discretization: float = 1e-4, through_pld: bool = False) -> PrivacyProfile | None:
    """The privacy profile of the independent releases `parts` (each a `GaussianPair`, `Spectrum`,
    result of `compose` or `poisson_subsample`, any `theory.profile.PrivacyProfile`, or a dp_accounting
    DpEvent or PrivacyLossDistribution; the same object given k times is k releases).

    All parts Gaussian (and through_pld False): the exact product (`GaussianLosses`, or a `WorstCase`
    of products over the candidate rows). Otherwise a `theory.pld.PLDProfile` on dp_accounting's grid
    of `discretization`, pessimistic, with `eps_error` its stated error (module docstring; its eps warns,
    `theory.pld.DiscretizationWarning`, when that error is a large part of it); through_pld=True sends
    every part, each on its own, through a PLD."""
    if not parts:
        raise ValueError("compose needs at least one part")
    counts: dict[int, int] = {}
    order: list[object] = []
    for part in parts:
        key = id(part)
        if key not in counts:
            order.append(part)
        counts[key] = counts.get(key, 0) + 1
    exact: list[tuple[PrivacyProfile, list[QuadraticLossProfile], int]] = []
    other: list[tuple[PrivacyProfile, None, int]] = []
    for part in order:
        for profile, count in _as_profiles(part, discretization):
            choices = None if through_pld else _alternatives(profile)
            if choices is not None:
                exact.append((profile, choices, count * counts[id(part)]))
            else:
                other.append((profile, None, count * counts[id(part)]))
    while np.prod([len(c) for _, c, _ in exact], dtype=np.float64) > MAX_COMBINATIONS:
        widest = max(range(len(exact)), key=lambda i: len(exact[i][1]))
        other.append((exact[widest][0], None, exact[widest][2]))
        del exact[widest]
    exact_profile: PrivacyProfile | None = None
    if exact:
        combos = itertools.product(*[[(alt, count) for alt in choices] for _, choices, count in exact])
        products = [product(combo) for combo in combos]
        exact_profile = products[0] if len(products) == 1 else WorstCase(products)
    if not other:
        return exact_profile
    pld: Any = None
    error = 0.0
    pieces: list[tuple[PrivacyProfile, int]] = (([(exact_profile, 1)] if exact_profile is not None else [])
                                                + [(p, c) for p, _, c in other])
    for profile, count in pieces:
        piece, gap = profile._pld(discretization, 1e-20)
        error += count * gap
        if count > 1:
            piece = _self_compose(piece, count)
        pld = piece if pld is None else pld.compose(piece)
    return from_pld(pld, eps_error=error, label=f"composition of {sum(c for _, c in pieces)} parts")


def _self_compose(pld: Any, count: int, truncation: float = 1e-15) -> Any:
    """`count` releases of one PLD, as dp_accounting's `self_compose` computes them (the pmf's FFT
    raised to the power count, on a window that holds all but `truncation` of the sum's mass by
    Chernoff bounds, that mass added to the infinite loss), with the Chernoff bounds taken in one
    pass over 20 orders placed around the normal approximation's optimum: dp_accounting's 40 separate
    logsumexp calls take 0.4 s per direction of a 44,000-point PLD here (the benchmark's target for a
    whole composition is 1 s). Any orders give valid bounds."""
    from scipy import fft  # here, not at import: every audit imports theory, few compose PLDs

    _, pld_module, pld_pmf = dp_accounting_modules()
    sides = []
    for pmf in pmfs(pld):
        dense = pmf.to_dense_pmf()
        probs = np.maximum(np.asarray(dense._probs, dtype=float), 0.0)
        index = np.arange(probs.size)
        mean = float(index @ probs) / max(float(probs.sum()), 1e-300)
        spread = np.sqrt(max(float(((index - mean) ** 2) @ probs) / max(float(probs.sum()), 1e-300), 1.0))
        # Chernoff: P(sum >= s) <= exp(count ln M(t) - t s); orders around the normal optimum
        best = np.sqrt(2.0 * np.log(2.0 / truncation) / count) / spread
        orders = best * np.array([0.125, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0])
        orders = np.append(orders, -orders)
        live = probs > 0
        exponent = np.outer(orders, index[live]) + np.log(probs[live])[None, :]
        peak = exponent.max(axis=1)
        log_mgf = peak + np.log(np.exp(exponent - peak[:, None]).sum(axis=1))
        bound = (count * log_mgf + np.log(2.0 / truncation)) / orders
        top = int(min(np.ceil(np.min(bound[:orders.size // 2])), (probs.size - 1) * count))
        bottom = int(max(np.floor(np.max(bound[orders.size // 2:])), 0))
        length = fft.next_fast_len(max(top - bottom + 1, probs.size))
        out = np.roll(np.real(fft.ifft(fft.fft(probs, length) ** count)), -bottom)[:top - bottom + 1]
        infinity = truncation - np.expm1(count * np.log1p(-float(dense._infinity_mass)))
        sides.append(pld_pmf.DensePLDPmf(float(dense._discretization), int(dense._lower_loss) * count + bottom,
                                         out, float(infinity), True))
    return pld_module.PrivacyLossDistribution(*sides)
