"""What a one-run estimator returns: the certified eps_lo at one delta, its confidence and assumption."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: The estimators, in the order reports list them.
METHODS = ("steinke", "fdp", "gaussian")


@dataclass(frozen=True)
class Estimate:
    """eps_lo: the mechanism is not (eps, delta)-DP for any eps < eps_lo, with probability >= 1 - alpha
    over the coin flips and the run, provided `assumption` holds. `asymptotic` marks a confidence that
    holds in the limit of many canaries (the Gaussian estimator); `details` holds the counts or fitted
    parameters the bound was computed from, and the checks of the assumption."""

    method: str
    eps_lo: float
    delta: float
    alpha: float
    assumption: str
    asymptotic: bool = False
    details: dict = field(default_factory=dict)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        kind = "asymptotic " if self.asymptotic else ""
        return (f"{self.method}: eps_lo = {self.eps_lo:.4g} at delta={self.delta:g} ({kind}{self.confidence:.0%} "
                f"confidence; assumes {self.assumption})")
