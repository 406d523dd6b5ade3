"""The exact curve to compare an audit with: the mechanism's output law through `theory`, or a
user-supplied curve. The auditor itself never needs it."""

from __future__ import annotations

import numpy as np


def _as_curve(values, eps, what):
    values = np.asarray(values, dtype=float)
    if values.shape != eps.shape:
        raise ValueError(f"{what} must give one delta per eps ({eps.shape}), got shape {values.shape}")
    return values


def exact_curves(mechanism, D, D_prime, eps, exact=None):
    """(max, forward, reverse, source) exact delta on the eps grid, or (None, None, None, None).

    `exact` may be an array (the max curve), a callable eps -> array, or a callable returning a
    (forward, reverse) pair. Otherwise, when the mechanism has `output_law(D)` returning a
    `theory.GaussianLaw` for both datasets, forward = GaussianPair.from_laws(law(D), law(D')).delta
    and reverse = the same pair reversed (NDIS theorem, spec ndis-als-rp.md §2.1); `source` says
    whether the laws are exact or only asymptotic (e.g. ALS as r -> inf).
    """
    eps = np.asarray(eps, dtype=float)
    if exact is not None:
        values = exact(eps) if callable(exact) else exact
        if isinstance(values, tuple) and len(values) == 2:
            forward, reverse = (_as_curve(v, eps, "exact") for v in values)
            return np.maximum(forward, reverse), forward, reverse, "given"
        return _as_curve(values, eps, "exact"), None, None, "given"
    output_law = getattr(mechanism, "output_law", None)
    if not callable(output_law):
        return None, None, None, None
    law, law_prime = output_law(D), output_law(D_prime)
    if law is None or law_prime is None:
        return None, None, None, None
    from ndis import theory

    pair = theory.GaussianPair.from_laws(law, law_prime)
    forward = _as_curve(pair.delta(eps), eps, "GaussianPair.delta")
    reverse = _as_curve(pair.reverse().delta(eps), eps, "GaussianPair.delta")
    source = "exact law" if getattr(law, "exact", True) and getattr(law_prime, "exact", True) else "asymptotic law"
    return np.maximum(forward, reverse), forward, reverse, source
