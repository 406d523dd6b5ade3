"""The grouped options of an audit, each group checked once, when it is made.

`ndis.audit(mech, D, D_prime, *, eps, n_samples, claimed, alpha, seed, neighbor, scorer, split,
execution, progress)` keeps the everyday arguments at the top and groups the rest:

* `Split`: how each side's samples are spent: training, validation and held out, and the share
  of the budget the black-box neighbour screen may spend;
* `Execution`: where and how the samples are drawn: workers, backend, scheduler, chunking,
  streaming, a time limit, and the literal algorithm as a control;
* `Scoring`: the score: the scorer, the feature map and the method ("threshold" or "eureka").

Each class checks its fields in `__post_init__` and raises a one-line ValueError naming the field,
so the command line, which builds these objects from its options, and the Python API share one
check of each value. The module imports nothing but the standard library, so that `ndis audit`
answers a mistake at once, before numpy is imported. The scorer's name and the feature map's are
checked against the registries when the audit starts, before anything is sampled. The classes are
exported by `ndis.auditor` (and `ndis`), whose audits take them.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

#: The estimation methods: one score and the whole curve with simultaneous bounds, or the papers' estimator.
METHODS = ("threshold", "eureka")
#: The sampling backends.
BACKENDS = ("threads", "loky", "dask")


def _fraction(name: str, value: float, low_open: bool, high_open: bool) -> float:
    """`value` as a float in the interval between 0 and 1 with the given open ends, else ValueError."""
    interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            (0 < value if low_open else 0 <= value) and (value < 1 if high_open else value <= 1)):
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return float(value)


def _count(name: str, value: int) -> int:
    """`value` as an int >= 1, else ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Split:
    """How each side's `n_samples` are spent.

    Parameters
    ----------
    train_fraction : the share that trains the score, at most `max_train` samples; the rest are held
        out for the estimate and the bounds. In (0, 1).
    max_train : the most training samples per side.
    validation_fraction : the share of the training samples that validate the scorers (the least
        validation log-loss chooses among them) and choose the events of the certificates. In (0, 1).
    screen_fraction : the black-box "worst" row screen (mechanisms without `worst_neighbor`) spends
        at most this share of 2 x n_samples on pilot audits of up to 6 candidate rows, each of at
        least 1,000 samples per side; below two such pilots (e.g. 0) the largest-leverage row is
        taken without a screen. In [0, 1].
    """

    train_fraction: float = 0.5
    max_train: int = 10**6
    validation_fraction: float = 0.25
    screen_fraction: float = 0.2

    def __post_init__(self) -> None:
        object.__setattr__(self, "train_fraction", _fraction("train_fraction", self.train_fraction, True, True))
        object.__setattr__(self, "max_train", _count("max_train", self.max_train))
        object.__setattr__(self, "validation_fraction",
                           _fraction("validation_fraction", self.validation_fraction, True, True))
        object.__setattr__(self, "screen_fraction", _fraction("screen_fraction", self.screen_fraction, False, False))

    @property
    def training(self) -> tuple[float, int, float]:
        """(train_fraction, max_train, validation_fraction), the arguments of `core.budget.split`."""
        return self.train_fraction, self.max_train, self.validation_fraction


@dataclass(frozen=True)
class Execution:
    """Where and how the samples are drawn.

    Parameters
    ----------
    n_jobs : sampling workers; -1 is every core. None (default): a mechanism of ndis (thread-safe)
        on one thread per core, any other sampler on one worker.
    backend : "threads" (this process), "loky" (joblib's worker processes) or "dask". None: threads
        for ndis's mechanisms, loky for other samplers when n_jobs is given.
    scheduler : with "dask", a scheduler address or a `distributed.Client`; None starts a local
        cluster of n_jobs in-process workers listening on 127.0.0.1 only.
    dashboard : with "dask" and no scheduler, serve the local cluster's dashboard on 127.0.0.1.
    chunk_size : samples per sampling task; None: min(n / 20, about 32 MB of output) per phase of n.
    streaming : count the held-out scores chunk by chunk on fixed edges, never keeping them (memory
        independent of n_samples; the bounds, certificates and verdict exact, the point estimate's
        sweep error stated), or keep them all (False: O(n) memory, an exact sweep).
    max_seconds : refuse, before any work, an audit whose estimated time exceeds it (a lower bound,
        `core.budget.estimate`); None: the caller's default (no limit for `ndis.audit`, an hour for
        `ndis.testing.assert_dp`); math.inf: no limit.
    literal : sample the mechanism's literal algorithm (as its paper writes it) instead of its fast
        exact sampler, as a control; for mechanism objects with `sample_literal`.
    """

    n_jobs: int | None = None
    backend: Literal["threads", "loky", "dask"] | None = None
    scheduler: Any = None
    dashboard: bool = False
    chunk_size: int | None = None
    streaming: bool = True
    max_seconds: float | None = None
    literal: bool = False

    def __post_init__(self) -> None:
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, numbers.Integral)
                                        or self.n_jobs == 0 or self.n_jobs < -1):
            raise ValueError(f"n_jobs must be a positive number of workers or -1 (all cores), got {self.n_jobs!r}")
        if self.backend is not None and self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))} or None, got {self.backend!r}")
        if self.chunk_size is not None and (isinstance(self.chunk_size, bool)
                                            or not isinstance(self.chunk_size, numbers.Integral) or self.chunk_size < 1):
            raise ValueError(f"chunk_size must be None (automatic) or a positive integer, got {self.chunk_size!r}")
        if self.max_seconds is not None and not (isinstance(self.max_seconds, numbers.Real) and self.max_seconds > 0):
            raise ValueError(f"max_seconds must be a number > 0 (math.inf: no limit) or None, got {self.max_seconds!r}")
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError("a scheduler goes with backend='dask'")
        if self.dashboard and (self.backend != "dask" or self.scheduler is not None):
            raise ValueError("dashboard=True applies to the local Dask cluster (backend='dask' without a scheduler); "
                             "a cluster of your own serves its dashboard as it was configured")


@dataclass(frozen=True)
class Scoring:
    """The score of a threshold audit, or the method.

    Parameters
    ----------
    scorer : "auto" (the least validation log-loss among `scorers.AUTO_CANDIDATES`, by successive
        halving; when both sides' validation rows pass Mardia's normality tests only the Gaussian
        plug-in is fitted; `auditor.scoring.selection`), a registered name ("quadratic", "gaussian",
        "knn", "mlp", "boosting", "density", "spline", "segments", or one added by
        `scorers.register`), or an object satisfying the `Scorer` protocol: fit(X_p, X_q, seed) ->
        self, log_odds(X) -> (n,) array.
    features : "auto" (the mechanism's `features`, else flatten), "flatten", "gram" or a callable.
    method : "threshold" (one score, the whole curve, simultaneous bounds) or "eureka" (the papers'
        estimator, `auditor.eureka`; it tests no claim).
    eureka : the eureka method's options: classifier ("knn" or "mlp"), k, train_fraction.
    """

    scorer: Any = "auto"
    features: str | Callable[..., Any] = "auto"
    method: Literal["threshold", "eureka"] = "threshold"
    eureka: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; allowed: {', '.join(METHODS)}")
        if self.eureka and self.method != "eureka":
            raise ValueError("eureka options go with method='eureka'")

    @classmethod
    def of(cls, scorer: Any) -> Scoring:
        """`scorer` itself when it is a Scoring, else the Scoring of that scorer (a name or an object)."""
        return scorer if isinstance(scorer, Scoring) else cls(scorer=scorer)
