"""Mechanisms of the DP libraries practitioners build with, as ndis mechanisms (`pip install "ndis[libraries]"`).

Each adapter module (`opendp`, `diffprivlib`, `pydp`, `opacus`) wraps its library's mechanisms as
callables that `ndis.auditor.audit` accepts, and lists `cases()`: the uses to audit, each at the
guarantee the library documents for it, and planted misuses (a wrong sensitivity or noise
multiplier passed) that an audit must flag.

    from .. import libraries
    for case in libraries.cases():
        report = audit(case.mechanism, case.D, case.D_prime, claimed=case.claimed, n_samples=case.n_samples)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: Adapter modules, in the order their cases are listed.
ADAPTERS = ("opendp", "diffprivlib", "pydp", "opacus")


@dataclass(frozen=True)
class LibraryCase:
    """One library mechanism on one neighbouring pair, with the guarantee the library states for it.

    mechanism : what `audit` accepts (a batched callable f(data, n, rng), or `auditor.per_sample(f)`).
    claimed : (eps, delta) the library documents (or its accountant computes) for this use.
    planted : True for a deliberate misuse whose true privacy is worse than `claimed` (must be flagged).
    n_samples : samples per side the audit-libraries experiment draws.
    features : the audit's feature map; "float-grid" (`auditor.scoring.features.float_grid`) makes the case a
        floating-point probe: does the implementation's output grid tell D from D' (Mironov 2012)?
    """

    library: str
    name: str
    mechanism: Any
    D: Any
    D_prime: Any
    claimed: tuple[float, float]
    planted: bool = False
    n_samples: int = 10**6
    note: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    features: str = "auto"


def cases(libraries: Iterable[str] = ADAPTERS) -> tuple[list[LibraryCase], dict[str, str]]:
    """(cases of every installed library, {library: why it is missing}) for the named adapters."""
    found: list[LibraryCase] = []
    missing: dict[str, str] = {}
    for name in libraries:
        if name not in ADAPTERS:
            raise ValueError(f"unknown library adapter {name!r}; known: {', '.join(ADAPTERS)}")
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ImportError as error:
            if (error.name or "").startswith("ndis"):
                raise
            missing[name] = f"{error} (install with: pip install \"ndis[libraries]\")"
            continue
        found.extend(module.cases())
    return found, missing
