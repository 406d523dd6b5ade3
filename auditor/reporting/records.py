"""The records an audit report keeps beside its curves, typed: JSON-ready dicts with a declared shape
(`typing.TypedDict`), so that `report.neighbor["row"]` reads the same in Python, in report.json and
to a type checker.

`AuditReport` holds one of each (`auditor.reporting.report`); `AuditReport.info` keeps the extras
(the mechanism's parameters, the output shape, the workers, the versions, the scorer selection's
rounds, the command line).
"""

from __future__ import annotations

from typing import Any, TypedDict


class SeedRecord(TypedDict):
    """The audit's root seed: `numpy.random.SeedSequence(entropy, spawn_key=spawn_key)` replays it."""

    entropy: int
    spawn_key: list[int]


class Sizes(TypedDict):
    """Samples per side that fitted the scorers, validated them (and chose the events), and were held out."""

    fit: int
    validation: int
    held_out: int


class NeighbourRecord(TypedDict, total=False):
    """How D' was chosen: the relation ("search" for a pair search; None for a D' given without one),
    the row, and how ("given", "mechanism", "screen", "max-leverage", "random", or the pair search's
    trial); a pair search also records the pair (D, D_prime)."""

    relation: str | None
    row: int | None
    how: str
    D: list[float]
    D_prime: list[float]


class ScreenRecord(TypedDict, total=False):
    """The black-box "worst" row screen: the share of the budget it could spend, the rows it tried and
    their pilot scores, its samples and seconds; or why it was skipped (`skipped`)."""

    fraction: float
    rows: list[int]
    scores: list[float]
    samples_per_side: int
    samples: int
    seconds: float
    skipped: str


class SamplesNeeded(TypedDict):
    """The samples per side (and held out) that would make a claim's delta detectable at its eps, and
    the time they would take at the audit's measured sampling rate (None when not measured)."""

    samples_per_side: int
    held_out_per_side: int
    sampling_rate: float | None
    seconds: float | None


class SequentialRecord(TypedDict):
    """A sequential audit (`auditor.sequential`): its level and budget, the samples used, why it stopped
    ("refuted", "futile" or "budget") in words, the combined p-value, the spending rule, the schedule
    of rounds (skipped ones listed) and every look's record."""

    alpha: float
    budget: int
    samples_used: int
    stopped: str
    reason: str
    p_value: float
    spending: str
    skipped_rounds: list[int]
    schedule: list[dict[str, Any]]
    rounds: list[dict[str, Any]]


#: The pair search's record (`auditor.pair_search.search_pair`): the space, the objective, every trial
#: and confirmation with its pilot statistics, samples and seed, the winner and why.
PairSearchRecord = dict[str, Any]
