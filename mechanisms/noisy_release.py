"""Release of the whole dataset with i.i.d. Gaussian noise, Y = X + sigma N (n x d).

The common core of the additive noise of Showkatbakhsh, Karakus & Diggavi (2018), X_AN (eq. 8), of
scheme (A) of Ding et al. (2022, Masking) (eq. 3) and of the local-model baseline of Burkhardt et al.
(2025, LTM) (each client releases a_i + g_i). vec(Y) ~ N(vec X, sigma^2 I_{nd}) exactly.

The full law is n*d-dimensional. Neighbours differing in row i (or entry (i, j)) change only that
row (entry) of the mean, and those coordinates of Y are sufficient for the pair. The parameter
`focus` (None, a row index i, or (i, j)) makes `output_law` and `features` describe just Y[i] or
Y[i, j], so that `theory.GaussianPair` stays 1- or d-dimensional at any n; without a focus the dense
law is returned for n*d <= DENSE_LIMIT only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core.validation import as_data, as_int
from ..theory.gaussian_pair import GaussianLaw
from .base import Draw, Mechanism, noise_variance

#: Largest n*d for which output_law without a focus builds the dense (n*d)^2 covariance.
DENSE_LIMIT = 4096

FOCUS_DOC = ("None, a row index i, or 'i,j': output_law and features then describe only Y[i] or "
             "Y[i, j], the sufficient coordinates for neighbours differing there (default None)")


#: The focus of a release: a row index i or an entry (i, j).
Focus = int | tuple[int, int]


def as_focus(value: object) -> Focus | None:
    """None, an int row index, or an (i, j) pair (also "i" / "i,j" strings from the CLI)."""
    if value is None:
        return None
    if isinstance(value, str):
        parts = [p for p in value.replace("(", "").replace(")", "").split(",") if p.strip()]
        value = tuple(int(p) for p in parts)
    if isinstance(value, (tuple, list, np.ndarray)):
        entries = tuple(as_int("focus", v, minimum=0) for v in value)
        if len(entries) == 1:
            return entries[0]
        if len(entries) != 2:
            raise ValueError(f"focus must be a row index i or an entry (i, j), got {entries!r}")
        return entries[0], entries[1]
    return as_int("focus", value, minimum=0)


class NoisyRelease(Mechanism):
    """Y = D + sigma N with sigma = self.noise_scale(D); subclasses supply the calibration."""

    focus: Focus | None

    def noise_scale(self, D: np.ndarray) -> float:
        raise NotImplementedError

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return as_data(D).shape

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        sigma = self.noise_scale(D)

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            out = rng.standard_normal((k, *D.shape))
            out *= sigma
            out += D
            return out

        return draw, D.shape, 8 * D.size    # small chunks: the batch is memory-bound

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """One noise matrix per release, added entry by entry as eq. 8 / eq. 3 write it."""
        sigma = self.noise_scale(D)

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            out = np.empty((k, *D.shape))
            for s in range(k):
                noise = rng.standard_normal(D.shape)
                out[s] = D + sigma * noise
            return out

        return draw, D.shape, D.size

    def _focus_index(self, shape: tuple[int, ...]) -> tuple[int, ...] | None:
        focus = self.focus
        if focus is None:
            return None
        i = focus if isinstance(focus, int) else focus[0]
        if i >= shape[0] or (not isinstance(focus, int) and focus[1] >= shape[1]):
            raise ValueError(f"focus={focus!r} is outside a dataset of shape {shape}")
        return (i,) if isinstance(focus, int) else focus

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """Exact N(vec D, sigma^2 I) of Y, or of Y[focus] when a focus is set."""
        D = as_data(D)
        sigma = self.noise_scale(D)
        index = self._focus_index(D.shape)
        mean = D.reshape(-1) if index is None else np.atleast_1d(D[index]).reshape(-1)
        if index is None and mean.size > DENSE_LIMIT:
            raise ValueError(f"the exact law of the full {D.shape[0]}x{D.shape[1]} release has dimension {mean.size} "
                             f"> {DENSE_LIMIT}; set focus=i (row) or focus=(i, j) (entry) to the neighbouring "
                             "coordinates (sufficient for the pair), e.g. mech.focused(D, relation)")
        return theory.GaussianLaw(mean, noise_variance(sigma) * np.eye(mean.size), copies=1, exact=True)

    def focused(self, D: ArrayLike, relation: str | None = None) -> NoisyRelease:
        """This mechanism focused on the coordinates its worst neighbour of D changes: the entry (i, j)
        if one entry changes, else the row i."""
        found = self.worst_neighbor(D, relation)
        if found is None:
            raise ValueError(f"{self.name} has no worst neighbour for relation {relation!r}")
        i, D_prime = found
        D = as_data(D)
        if D_prime.shape != D.shape:
            return self.with_params(focus=int(i))
        changed = np.argwhere(D != D_prime)
        return self.with_params(focus=tuple(int(v) for v in changed[0]) if len(changed) == 1 else int(i))

    def features(self, samples: np.ndarray) -> np.ndarray:
        """Y[:, focus] when a focus is set (sufficient), else the flattened release."""
        samples = np.asarray(samples, dtype=float)
        index = None if self.focus is None else self._focus_index(samples.shape[1:])
        if index is None:
            return samples.reshape(samples.shape[0], -1)
        return samples[(slice(None),) + index].reshape(samples.shape[0], -1)

    def mu(self, D: ArrayLike, D_prime: ArrayLike) -> float:
        """||D - D'||_F / sigma: the pair is the Gaussian mechanism with this mu (Balle & Wang 2018)."""
        D, D_prime = as_data(D), as_data(D_prime)
        if D.shape != D_prime.shape:
            raise ValueError(f"D and D' must have the same shape, got {D.shape} and {D_prime.shape}")
        return float(np.linalg.norm(D - D_prime) / self.noise_scale(D))
