"""Data preparation shared by the scorers: the labelled training set, affine normalisations, the
atoms of a column, and evaluation in bounded-memory chunks."""

from __future__ import annotations

import numpy as np

_CHUNK = 100_000


def training_set(X_p, X_q, max_fit: int):
    """(X, y): the first `max_fit` rows of each side stacked, label 1 for X_p and 0 for X_q.

    Samples are i.i.d., so the first rows are a random subsample.
    """
    X_p, X_q = np.asarray(X_p, float)[:max_fit], np.asarray(X_q, float)[:max_fit]
    X = np.concatenate([X_p, X_q])
    y = np.concatenate([np.ones(len(X_p)), np.zeros(len(X_q))])
    return X, y


def column_atoms(values: np.ndarray, max_atoms: int, atom_rows: int) -> tuple[np.ndarray, bool]:
    """(the atoms of a column, whether the column is discrete).

    A column with at most `max_atoms` distinct values is discrete: every value is an atom (SVT's
    answer codes, report-noisy-max's index). In any other column, the values repeated at least
    `atom_rows` times are atoms (iSVT4 releases 0 where it answers nothing): point masses that a
    scorer treats apart from the column's continuous part."""
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size <= max_atoms:
        return distinct, True
    return distinct[counts >= atom_rows], False


def in_chunks(function, X) -> np.ndarray:
    """function(X) evaluated on blocks of at most 100,000 rows and concatenated."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([function(X[i:i + _CHUNK]) for i in range(0, max(len(X), 1), _CHUNK)])


def power_of_two_unit(X, axis=None):
    """The power of two u with max |X| < u <= 2 max |X| (over `axis`; 1 where X is all zero): dividing
    by it is exact and brings the values into (-1, 1), where their squares and sums neither overflow (outputs of 1e160
    have squares beyond float64's 1.8e308) nor underflow. Moments computed in these units and
    multiplied back are bit for bit the moments computed directly whenever those do not overflow,
    because scaling by a power of two commutes with rounding."""
    largest = np.max(np.abs(X), axis=axis, initial=0.0)
    return np.ldexp(1.0, np.minimum(np.frexp(largest)[1], 1023))  # 2^1024 is not a float: [-2, 2] there


class Standardiser:
    """Affine map to zero mean, unit variance per column (constant columns only centred), with the
    moments computed in units of a power of two per column (`power_of_two_unit`): the standardised
    values do not depend on the units of the data."""

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        unit = power_of_two_unit(X, axis=0)
        U = X / unit
        self.mean = U.mean(axis=0) * unit
        scale = U.std(axis=0)
        self.scale = np.where(scale > 0, scale * unit, 1.0)
        return self

    def __call__(self, X):
        return (X - self.mean) / self.scale


class Whitener:
    """Affine map to zero mean and identity covariance (x - m) L^-T, S = L L^T (eigenvalues floored
    at 1e-12 of the largest, so that a degenerate feature does not blow up). S is computed in units of
    one power of two (`power_of_two_unit`), so it does not overflow for large outputs and the map does
    not depend on the units of the data."""

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        unit = power_of_two_unit(X)
        U = X / unit
        return self.from_moments(U.mean(axis=0), np.cov(U, rowvar=False), unit)

    def from_moments(self, mean, cov, unit):
        """The map of the data whose mean and covariance, in units of the power of two `unit`, are
        `mean` and `cov`."""
        values, vectors = np.linalg.eigh(np.atleast_2d(cov))
        values = np.maximum(values, 1e-12 * max(values.max(), 1e-300))
        self.mean, self.transform = np.asarray(mean) * unit, vectors / (np.sqrt(values) * unit)
        return self

    def __call__(self, X):
        return (X - self.mean) @ self.transform
