"""ndis: black-box privacy auditing and exact privacy spectra.

The everyday API, importable from the top level (each is loaded on first use, so `import ndis`
stays cheap)::

    import ndis
    mech = ndis.get_mechanism("gaussian", query="mean", sigma=0.5)
    report = ndis.audit(mech, D, neighbor="remove:worst", n_samples=10**5)
    report = ndis.audit(mech, D, neighbor="remove:worst", claimed=ndis.gaussian_dp(1.0))  # a claimed curve
    pair = ndis.GaussianPair(mean1, cov1, mean2, cov2)

Subpackages: `ndis.theory` (exact spectra), `ndis.mechanisms` (the schemes and the registry),
`ndis.auditor` (black-box estimation), `ndis.experiments` (datasets and the papers'
reproductions), `ndis.core` (validation, eps grids, neighbour relations, curves).
"""

from __future__ import annotations

import importlib

__version__ = "0.2.0"

#: name -> (module, attribute) of the everyday API
_API = {
    "audit": ("ndis.auditor", "audit"),
    "audit_search": ("ndis.auditor", "audit_search"),
    "AuditReport": ("ndis.auditor", "AuditReport"),
    "claimed_curve": ("ndis.auditor.claims", "claimed_curve"),
    "gaussian_dp": ("ndis.auditor.claims", "gaussian_dp"),
    "GaussianPair": ("ndis.theory", "GaussianPair"),
    "Spectrum": ("ndis.theory", "Spectrum"),
    "spectrum": ("ndis.theory", "spectrum"),
    "Mechanism": ("ndis.mechanisms", "Mechanism"),
    "get_mechanism": ("ndis.mechanisms", "get"),
    "mechanism_names": ("ndis.mechanisms", "names"),
    "load_dataset": ("ndis.experiments.datasets", "load"),
}
_SUBPACKAGES = ("core", "theory", "mechanisms", "auditor", "experiments")

__all__ = ["__version__", *_API, *_SUBPACKAGES]


def __getattr__(name: str):
    if name in _API:
        module, attribute = _API[name]
        value = getattr(importlib.import_module(module), attribute)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'ndis' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
