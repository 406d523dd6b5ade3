"""Black-box estimation of a mechanism's privacy spectrum from samples.

`audit(mech, D, D_prime, ...)` trains one score function to tell M(D) from M(D') and turns
held-out scores into delta-hat(eps) for both directions, with a lower bound that holds
simultaneously over the eps grid, the detectable floor and a verdict on a claimed (eps, delta);
`Split`, `Execution` and `Scoring` group its options. `audit_sequential` tests a claim in rounds
that stop as soon as it is refuted. `audit_search` first searches the neighbouring pair of query
vectors to audit (`pair_search`).
"""

from ..core.options import Execution, Scoring, Split
from .api import audit
from .pair_search import Search, audit_search, search_pair
from .reporting.report import AuditReport
from .sampling.adapters import Batched as batched, PerSample as per_sample
from .scoring.scorers import Scorer
from .sequential import audit_sequential
from .statistics.verdict import Verdict

__all__ = ["audit", "audit_sequential", "audit_search", "search_pair", "AuditReport", "Scorer", "Verdict", "batched",
           "per_sample", "Split", "Execution", "Scoring", "Search"]
