"""Shared machinery of the utility tables of Lu et al. (2023) [NDIS] (Tables I-IV): datasets, trials, intervals.

Every table row runs a registered mechanism `trials` times on a dataset and reports the mean of a
utility metric with a 95% interval (mean +- 1.96 standard errors; [NDIS] used an empirical
bootstrap of 100 runs, which gives intervals of the same size), the mechanism's noise scale (the
"regularisation parameter" of the tables) and its exact (or asymptotic, labelled) delta at eps = 1.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import mechanisms
from ..mechanisms import Mechanism
from . import datasets

EPS = 1.0
#: sketch sizes of [NDIS]'s experiments: Cancer 300, Flight 1200, Song 20000 (the r behind Table IV's [17] constant)
SKETCH = {"Cancer": 300, "Flight": 1200, "Song": 20000}


def cases(quick: bool, notes: list[str]) -> list[tuple[str, np.ndarray]]:
    """(name, D) for Cancer when NDIS_CANCER_PATH is set (else a note), Flight (first 20,000 rows when
    quick) and Song when NDIS_SONG_PATH is set."""
    cancer = datasets.optional_cancer(notes)
    found = (([] if cancer is None else [("Cancer", cancer)])
             + [("Flight", datasets.flights(rows=20_000 if quick else None))])
    if os.environ.get("NDIS_SONG_PATH"):
        found.append(("Song", datasets.song(os.environ["NDIS_SONG_PATH"])))
    return found


def interval(values: ArrayLike) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal interval."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(1.96 * values.std(ddof=1) / np.sqrt(values.size))


def run_trials(name: str, params: dict[str, Any], D: np.ndarray, trials: int,
               seed: int) -> tuple[Mechanism, np.ndarray]:
    """(mechanism, outputs): `trials` independent outputs of a registered mechanism on D."""
    mech = mechanisms.get(name, **params)
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode())]))
    return mech, mech.sample(D, trials, rng)


def configurations(methods: Sequence[tuple[str, str]], quick: bool, seed: int,
                   params_for: Callable[[str, int, int], dict[str, Any]],
                   notes: list[str]) -> Iterator[tuple[str, np.ndarray, int, str, str, Mechanism, np.ndarray]]:
    """Run every (label, mechanism name) of `methods` on every dataset: yields
    (dataset, D, r, label, name, mechanism, outputs), with params_for(name, r, n) -> parameters; a
    dataset that is not available adds its reason to `notes` (once)."""
    trials = 20 if quick else 100
    skipped: list[str] = []
    found = cases(quick, skipped)
    notes.extend(note for note in skipped if note not in notes)
    for dataset, D in found:
        r, n = SKETCH[dataset], D.shape[0]
        for label, name in methods:
            mech, outputs = run_trials(name, params_for(name, r, n), D, trials, seed)
            yield dataset, D, r, label, name, mech, outputs


def fmt(mean: float, half: float) -> str:
    return f"{mean:.3f} ± {half:.3f}"
