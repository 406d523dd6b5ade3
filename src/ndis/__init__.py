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

from typing import TYPE_CHECKING

from ._lazy import attach

__version__ = "0.2.0"

if TYPE_CHECKING:  # the one list of the everyday API: followed by editors, loaded on first use (`_lazy`)
    from .auditor import AuditReport, Execution, Scoring, Search, Split, audit, audit_search, audit_sequential
    from .auditor.one_run import audit_one_run
    from .auditor.statistics.claims import claimed_curve, gaussian_dp
    from .core.neighbors import Neighbor
    from .experiments.datasets import load as load_dataset
    from .mechanisms import Mechanism, get as get_mechanism, names as mechanism_names
    from .theory import GaussianPair, Spectrum, spectrum

__getattr__, __dir__, _names = attach(__name__, __file__, submodules=("core", "theory", "mechanisms", "auditor",
                                                                      "experiments"))
__all__ = ["__version__", *_names]
