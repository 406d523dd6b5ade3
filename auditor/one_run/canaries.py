"""Canary design for a one-run audit (Steinke, Nasr & Jagielski 2023, Algorithm 1): m canaries, each
included in the training run by an independent fair coin flip drawn from a recorded seed.

Two kinds, each knowing how to put its included canaries into the training input (`insert`):

* `InputCanaries` (black box: only the final model is seen): m examples appended to the training
  data when included; a canary's score reads the final model at that example (e.g. minus its loss).
* `DiracCanaries` (white box: the auditor adds gradients to the updates): canary i is the gradient
  norm x e_{coordinates[i]}, touching one model coordinate, added to every step's sum of clipped
  gradients when included; a canary's score is the model's movement along its coordinate. Distinct
  coordinates make the canaries' signals independent given the run.

The coin flips are returned to the caller, who keeps them from the scoring step (`training.audit_training`
passes the scorer the model and one canary, never the flips).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.validation import as_int, as_positive


def coin_flips(m: int, seed) -> np.ndarray:
    """m independent fair coin flips (True = included) from `seed` (an int or SeedSequence)."""
    return np.random.default_rng(seed).random(as_int("m", m)) < 0.5


@dataclass(frozen=True)
class GradientCanaries:
    """What a white-box trainer receives: the data, and the included Dirac canaries to add to every
    step's sum of clipped per-example gradients (`norm` x e_j for each j in `coordinates`)."""

    data: object
    coordinates: np.ndarray
    norm: float


class InputCanaries:
    """m input-space canaries: `examples` is an array (m, ...) or a tuple of arrays (X, y) of m rows;
    `insert` appends the included ones to the training data of the same form."""

    kind = "input-space (black box)"

    def __init__(self, examples):
        self.examples = tuple(np.asarray(a) for a in examples) if isinstance(examples, tuple) else np.asarray(examples)
        lengths = {len(a) for a in self.examples} if isinstance(self.examples, tuple) else {len(self.examples)}
        if len(lengths) != 1:
            raise ValueError(f"the canary arrays must have one row per canary each, got lengths {sorted(lengths)}")
        self.m = lengths.pop()

    def __len__(self) -> int:
        return self.m

    def __getitem__(self, i):
        return tuple(a[i] for a in self.examples) if isinstance(self.examples, tuple) else self.examples[i]

    def insert(self, data, included: np.ndarray):
        """`data` with the included canaries appended (rows; each array of a tuple alike)."""
        if isinstance(self.examples, tuple):
            if not isinstance(data, tuple) or len(data) != len(self.examples):
                raise ValueError(f"the canaries are a tuple of {len(self.examples)} arrays, so the data must be too")
            return tuple(np.concatenate([np.asarray(d), a[included]]) for d, a in zip(data, self.examples))
        return np.concatenate([np.asarray(data), self.examples[included]])


class DiracCanaries:
    """m white-box gradient canaries, canary i = norm x e_{coordinates[i]} (distinct coordinates of the
    model's flattened parameters); `choose` draws them among candidate coordinates with a seed."""

    kind = "Dirac gradient (white box)"

    def __init__(self, coordinates, norm: float = 1.0):
        self.coordinates = np.asarray(coordinates)
        if self.coordinates.ndim != 1 or not np.issubdtype(self.coordinates.dtype, np.integer):
            raise ValueError("coordinates must be a 1-D array of integer parameter indices, one per canary")
        if np.unique(self.coordinates).size != self.coordinates.size or np.any(self.coordinates < 0):
            raise ValueError("each Dirac canary needs its own non-negative coordinate: the coordinates repeat or are "
                             "negative")
        self.norm = as_positive("norm", norm)
        self.m = self.coordinates.size

    @classmethod
    def choose(cls, m: int, candidates, seed, norm: float = 1.0) -> "DiracCanaries":
        """m distinct coordinates drawn at random (`seed`) from `candidates` (an int n: range(n))."""
        pool = np.arange(candidates) if np.ndim(candidates) == 0 else np.asarray(candidates)
        if as_int("m", m) > pool.size:
            raise ValueError(f"{m} Dirac canaries need {m} distinct coordinates, but only {pool.size} are candidates")
        return cls(np.random.default_rng(seed).choice(pool, size=m, replace=False), norm)

    def __len__(self) -> int:
        return self.m

    def __getitem__(self, i) -> int:
        return int(self.coordinates[i])

    def insert(self, data, included: np.ndarray) -> GradientCanaries:
        return GradientCanaries(data, self.coordinates[included], self.norm)
