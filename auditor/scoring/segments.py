"""A scorer for outputs made of discrete codes and at most one released value: a piecewise-constant
log-likelihood ratio per code, with breakpoints chosen by penalised likelihood.

Many mechanisms release a discrete outcome and one number with it: report-noisy-max returning the
value, iSVT4 (Lyu, Su & Li 2017, Algorithm 3: the answer codes and the first noisy answer above the
threshold), a histogram query with one noisy bin. Given the codes (an *atom*: the values of the
discrete columns and which other columns sit at their repeated values), the log-likelihood ratio
log p/q is a function of the one released value v, and at a small eps0 its violating events are
intervals of v where that function is nearly flat (iSVT4 "all above" at eps0 = 0.2: v below about
1 after the second answer, where log p/q is exactly 0.3, 0.4 or 0.5). A histogram of v with fixed
quantile bins (`auditor.scoring.density`) estimates each bin apart and so leaves the noise of every bin in
the score; a smooth additive fit (`auditor.scoring.spline`) rounds off the kinks of a Laplace ratio. Here
each atom's values are cut into fine quantile bins, and adjacent bins are merged into segments by
optimal partitioning (Jackson et al. 2005): the segmentation minimising

    sum over segments of -log-likelihood(binomial label proportion) + penalty * (number of segments),

with the BIC penalty log(n_atom)/2 per segment (one proportion each; Schwarz 1978). A segment's
score is the smoothed log ratio of its two frequencies, log((c_P + 1/2)/n_P) - log((c_Q + 1/2)/n_Q),
as in `auditor.scoring.density`; bins have edges at each side's smallest and largest value in the atom too,
so that a stretch only one input produces (a support edge) can be a segment of its own.

The partition is optimised separately within blocks cut at each atom's `TAILS` quantiles (1%, 3%
and 10% from either end), so that no segment straddles them. The penalised likelihood weighs a
stretch by its rows: a flat extreme 1% whose ratio differs by a few percent from the ramp beside it
barely moves the likelihood and is pooled with the ramp, yet the audit's events at large eps are
exactly such tails (for a location family with a monotone likelihood ratio, such as Laplace,
exponential or Gaussian noise on a released value, log p/q is most extreme at the ends). Measured
on report-noisy-max returning its Laplace value (DP-Sniper's ReportNoisyMax3, true eps 0.25,
10^7 samples per side, seed 0): eps_lo 0.2323 with one block, 0.2391 with the tail blocks.

Fitting raises ValueError (and `audit(scorer="auto")` skips the candidate) when a training row has
two or more continuous coordinates, since the output then is not of this form (Gaussian or Laplace
vectors). With `codes_and_value=True` (how `audit(scorer="auto")` uses it) it also raises when the
output is not codes *and* a value: a lone value (no discrete column) or discrete codes alone.
On codes alone it is the density scorer (one cell per atom); on a lone value it is a histogram
with merged cells, and there the density scorer's fixed cells certified more: ReportNoisyMax3 at 2 x 10^8 samples per side
and 90% confidence, eps_lo 0.2478 against 0.2489 (docs/results.md). Rows of atoms not seen in
training score log(n_P / n_Q).
"""

from __future__ import annotations

import numpy as np

from .density import PRIOR
from .preprocessing import column_atoms, in_chunks, training_set

#: Quantiles of an atom's values from either end at which segments are always cut (module doc).
TAILS = (0.01, 0.03, 0.1)


def _segments(p: np.ndarray, q: np.ndarray, penalty: float) -> np.ndarray:
    """Start indices of the optimal partition of bins with label counts p, q (optimal partitioning
    by dynamic programming over the segment ends, O(bins^2))."""
    cp, cq = np.concatenate([[0.0], np.cumsum(p)]), np.concatenate([[0.0], np.cumsum(q)])

    def cost(start, end):  # -log-likelihood of the bins start..end-1 as one segment, for an array of starts
        a, b = cp[end] - cp[start], cq[end] - cq[start]
        n = a + b
        with np.errstate(divide="ignore", invalid="ignore"):
            return -np.nan_to_num(a * np.log(a / n)) - np.nan_to_num(b * np.log(b / n))

    bins = p.size
    best, last = np.zeros(bins + 1), np.zeros(bins + 1, dtype=int)
    for end in range(1, bins + 1):
        starts = np.arange(end)
        total = best[:end] + cost(starts, end) + penalty
        last[end] = int(np.argmin(total))
        best[end] = total[last[end]]
    starts, end = [], bins
    while end > 0:
        starts.append(last[end])
        end = last[end]
    return np.array(starts[::-1])


class SegmentScorer:
    """Per-atom piecewise-constant log p/q of one released value, segments by penalised likelihood
    (module doc).

    max_atoms, atom_rows : the atoms of each column (`preprocessing.column_atoms`).
    bin_rows : the fine bins of an atom's values hold about this many training rows (at most
        `max_bins` bins per atom).
    penalty : multiplies the BIC penalty log(n_atom)/2 per segment.
    tails : quantiles from either end of an atom's values where segments are always cut.
    max_fit : training rows used per side.
    codes_and_value : refuse (ValueError) outputs without a discrete column or without a released
        value (module doc).
    """

    name = "segments"

    def __init__(self, max_atoms: int = 64, atom_rows: int = 50, bin_rows: int = 50, max_bins: int = 1024,
                 penalty: float = 1.0, tails=TAILS, max_fit: int = 10**6, codes_and_value: bool = False):
        self.max_atoms, self.atom_rows, self.bin_rows, self.max_bins = max_atoms, atom_rows, bin_rows, max_bins
        self.penalty, self.tails, self.max_fit = penalty, np.asarray(tails, dtype=float), max_fit
        self.codes_and_value = codes_and_value

    def _split(self, X):
        """(atom key of each row, the released value of each row or NaN, whether a row has two or
        more continuous coordinates)."""
        key = np.zeros(len(X), dtype=np.int64)
        value = np.full(len(X), np.nan)
        continuous_count = np.zeros(len(X), dtype=int)
        for j, atoms in enumerate(self._atoms):
            where = np.searchsorted(atoms, X[:, j])
            is_atom = atoms[np.minimum(where, atoms.size - 1)] == X[:, j] if atoms.size else np.zeros(len(X), bool)
            code = np.where(is_atom, where, atoms.size)  # atoms.size: continuous (or an unseen discrete value)
            key = key * (atoms.size + 1) + code
            continuous = ~is_atom & ~self._discrete[j]
            value = np.where(continuous, X[:, j], value)
            continuous_count += continuous
        return key, value, continuous_count >= 2

    def fit(self, X_p, X_q, seed=0):
        X, y = training_set(X_p, X_q, self.max_fit)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"the segments scorer needs a non-empty 2-D feature array, got shape {X.shape}")
        self._atoms, self._discrete = [], []
        radix = 1
        for j in range(X.shape[1]):
            atoms, discrete = column_atoms(X[:, j], self.max_atoms, self.atom_rows)
            self._atoms.append(atoms)
            self._discrete.append(discrete)
            radix *= atoms.size + 1
            if radix >= 2**62:
                raise ValueError(f"the segments scorer does not apply: {X.shape[1]} columns give more than 2^62 atoms")
        key, value, several = self._split(X)
        if several.any():
            raise ValueError(f"the segments scorer does not apply: {several.mean():.1%} of the training rows have two "
                             "or more continuous coordinates")
        if self.codes_and_value and not (any(self._discrete) and np.isfinite(value).any()):
            what = "discrete codes alone" if any(self._discrete) else "a lone released value"
            raise ValueError(f"the segments scorer is not used on {what}: the density scorer covers it")
        n_p, n_q = int(y.sum()), int(len(y) - y.sum())
        self._unseen = float(np.log(n_p / n_q))
        self._keys, self._edges, self._scores = [], [], []
        for atom in np.unique(key):
            rows = key == atom
            v, labels = value[rows], y[rows]
            if np.isnan(v).any():  # an atom without a continuous coordinate: one cell
                edges, segment = np.empty(0), np.zeros(v.size, dtype=int)
            else:
                edges, segment = self._segment(v, labels)
            c_p = np.bincount(segment, weights=labels, minlength=edges.size + 1)
            c_q = np.bincount(segment, minlength=edges.size + 1) - c_p
            self._keys.append(atom)
            self._edges.append(edges)
            self._scores.append(np.log((c_p + PRIOR) / n_p) - np.log((c_q + PRIOR) / n_q))
        return self

    def _segment(self, v, labels):
        """(inner edges of the segments of an atom's values, each value's segment)."""
        bins = int(np.clip(v.size // self.bin_rows, 1, self.max_bins))
        ends = [end for side in (labels == 1, labels == 0) if side.any()
                for end in (v[side].min(), np.nextafter(v[side].max(), np.inf))]  # support edges
        cuts = np.quantile(v, np.concatenate([self.tails, 1 - self.tails]))
        cuts = cuts[(cuts > v.min()) & (cuts <= v.max())]
        inner = np.unique(np.concatenate([np.quantile(v, np.linspace(0, 1, bins + 1))[1:-1], ends, cuts]))
        inner = inner[(inner > v.min()) & (inner <= v.max())]  # bins [edge_i, edge_i+1)
        fine = np.searchsorted(inner, v, side="right")
        p = np.bincount(fine, weights=labels, minlength=inner.size + 1)
        q = np.bincount(fine, minlength=inner.size + 1) - p
        blocks = np.unique(np.concatenate([[0], np.searchsorted(inner, cuts) + 1, [p.size]]))  # the bins cuts start
        penalty = self.penalty * np.log(v.size) / 2
        starts = np.concatenate([a + _segments(p[a:b], q[a:b], penalty) for a, b in zip(blocks[:-1], blocks[1:])])
        edges = inner[starts[1:] - 1]
        return edges, np.searchsorted(edges, v, side="right")

    def log_odds(self, X):
        lookup = dict(zip(self._keys, range(len(self._keys))))

        def chunk(c):
            key, value, _ = self._split(c)
            out = np.full(len(c), self._unseen)
            for atom in np.unique(key):
                index = lookup.get(atom)
                if index is None:
                    continue
                rows = key == atom
                # an atom without a continuous coordinate has no edges: its one cell
                segment = np.searchsorted(self._edges[index], value[rows], side="right")
                out[rows] = self._scores[index][segment]
            return out

        return in_chunks(chunk, X)
