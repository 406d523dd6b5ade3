"""ndis: black-box privacy auditing and exact privacy spectra.

The everyday API, importable from the top level (each is loaded on first use, so `import ndis`
stays cheap)::

    import ndis
    mech = ndis.get_mechanism("gaussian", query="mean", sigma=0.5)
    report = ndis.audit(mech, D, neighbor="remove:worst", n_samples=10**5)
    report = ndis.audit(mech, D, neighbor="remove:worst", claimed=ndis.gaussian_dp(1.0))  # a claimed curve
    pair = ndis.GaussianPair(mean1, cov1, mean2, cov2)
    result = ndis.audit_one_run(scores, included, delta=1e-5)   # one training run with canaries

Subpackages: `ndis.theory` (exact spectra), `ndis.mechanisms` (the schemes and the registry),
`ndis.auditor` (black-box estimation), `ndis.experiments` (datasets and the papers'
reproductions), `ndis.core` (validation, eps grids, neighbour relations, curves).
"""

from __future__ import annotations

import ast
import importlib
import pathlib
from typing import TYPE_CHECKING

__version__ = "0.2.0"

if TYPE_CHECKING:  # the one list of the everyday API: read by editors here, and below at run time
    from ndis.auditor import AuditReport, audit, audit_search
    from ndis.auditor.one_run import audit_one_run
    from ndis.auditor.statistics.claims import claimed_curve, gaussian_dp
    from ndis.experiments.datasets import load as load_dataset
    from ndis.mechanisms import Mechanism
    from ndis.mechanisms import get as get_mechanism
    from ndis.mechanisms import names as mechanism_names
    from ndis.theory import GaussianPair, Spectrum, spectrum


def _everyday_api() -> dict[str, tuple[str, str]]:
    """name -> (module, attribute), read from the TYPE_CHECKING block above without importing it."""
    tree = ast.parse(pathlib.Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    return {alias.asname or alias.name: (node.module, alias.name) for node in block.body for alias in node.names}


_API = _everyday_api()
_SUBPACKAGES = ("core", "theory", "mechanisms", "auditor", "experiments")

__all__ = ["__version__", *_API, *_SUBPACKAGES]


def __getattr__(name: str):
    """Load an everyday name or a subpackage on first use, so `import ndis` stays cheap."""
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
