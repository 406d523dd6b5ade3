"""The exact curve to compare an audit with: the mechanism's output law through `theory`, or a
user-supplied curve. The auditor itself never needs it."""

from __future__ import annotations

import numpy as np

from ... import theory
from ...core.curve import Curve


def _values(values, eps, what):
    values = np.asarray(values, dtype=float)
    if values.shape != eps.shape:
        raise ValueError(f"{what} must give one delta per eps ({eps.shape}), got shape {values.shape}")
    return values


def exact_curve(mechanism, D, D_prime, eps, exact=None) -> tuple[Curve | None, str | None]:
    """(Curve, source) of the exact delta on the eps grid, or (None, None).

    `exact` may be an array, a callable eps -> array, or a callable returning a (forward, reverse)
    pair; a single curve is taken for both directions. Otherwise, when the mechanism has
    `output_law(D)` returning a `theory.GaussianLaw` for both datasets, forward =
    GaussianPair.from_laws(law(D), law(D')).delta and reverse = the same pair reversed: the
    hockey-stick divergence of two Gaussians in closed form (the NDIS theorem; Lu, Magdon-Ismail,
    Wei & Zikas 2023). `source` says whether the laws are exact or only asymptotic (e.g. ALS as
    r -> inf), or "given".
    """
    eps = np.asarray(eps, dtype=float)
    if exact is not None:
        values = exact(eps) if callable(exact) else exact
        if isinstance(values, tuple) and len(values) == 2:
            return Curve(eps, *(_values(v, eps, "exact") for v in values)), "given"
        values = _values(values, eps, "exact")
        return Curve(eps, values, values), "given"
    output_law = getattr(mechanism, "output_law", None)
    if not callable(output_law):
        return None, None
    law, law_prime = output_law(D), output_law(D_prime)
    if law is None or law_prime is None:
        return None, None
    pair = theory.GaussianPair.from_laws(law, law_prime)
    forward = _values(pair.delta(eps), eps, "GaussianPair.delta")
    reverse = _values(pair.reverse().delta(eps), eps, "GaussianPair.delta")
    source = "exact law" if getattr(law, "exact", True) and getattr(law_prime, "exact", True) else "asymptotic law"
    return Curve(eps, forward, reverse), source
