"""What a one-run estimator returns: the certified eps_lo at one delta, its confidence and assumption,
and whether the data rejected that assumption."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: The estimators, in the order reports list them.
METHODS = ("steinke", "fdp", "gaussian")
#: The estimators that rest on nothing but the coin flips; `FALLBACK` is the one a report's headline
#: falls back to when the asked estimator's assumption is rejected by its checks.
ASSUMPTION_FREE = ("steinke", "fdp")
FALLBACK = "steinke"


class Uncomputable(ValueError):
    """An estimator cannot give a bound on these canaries; the message says why, in one line."""


@dataclass(frozen=True)
class Estimate:
    """eps_lo: the mechanism is not (eps, delta)-DP for any eps < eps_lo, with probability >= 1 - alpha
    over the coin flips and the run, provided `assumption` holds. `asymptotic` marks a confidence that
    holds in the limit of many canaries (the Gaussian estimator); `details` holds the counts or fitted
    parameters the bound was computed from, and the checks of the assumption. `rejected` says why the
    checks rejected the assumption (None when they did not, or when there is nothing to check): such
    an estimate is shown but not certified."""

    method: str
    eps_lo: float
    delta: float
    alpha: float
    assumption: str
    asymptotic: bool = False
    details: dict = field(default_factory=dict)
    rejected: str | None = None

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def certified(self) -> bool:
        """True unless the checks of the estimator's assumption rejected it."""
        return self.rejected is None

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        kind = "asymptotic " if self.asymptotic else ""
        text = (f"{self.method}: eps_lo = {self.eps_lo:.4g} at delta={self.delta:g} ({kind}{self.confidence:.0%} "
                f"confidence; assumes {self.assumption})")
        return text if self.certified else f"{text}: model rejected; not certified ({self.rejected})"
