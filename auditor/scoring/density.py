"""A density-ratio scorer for discrete or low-dimensional outputs: smoothed cell counts.

The output space is cut into cells fitted on the training rows, and the log-odds of a cell is the
smoothed log ratio of its two empirical frequencies,

    log((c_P + a) / n_P) - log((c_Q + a) / n_Q),      a = 1/2

(the Krichevsky-Trofimov / Jeffreys estimate of each side's cell probability), a histogram
estimate of log p/q whose level sets are unions of cells. Cells are the products of per-column
codes:

* a column with few distinct values (at most `max_atoms`: SVT's answer codes, report-noisy-max's
  index) is discrete: each value is its own code, so each distinct output vector is an atom;
* in any other column, every value repeated at least `atom_rows` times keeps its own code (iSVT4
  releases 0 where it answers nothing), and the remaining values fall in quantile bins of the
  pooled training rows, `bins` per column (default the cube root of the rows, the rate of a
  histogram's bias-variance trade-off, Freedman & Diaconis 1981), with four more edges at the
  smallest and largest value each side takes. Those support edges isolate what only one side
  produces (report-noisy-max with exponential noise returning the value: values between the two
  lower ends of the supports occur under one input only): such a cell has c_Q = 0 and log-odds
  log(2 c_P + 1) plus the size ratio, the most extreme of the fit, so its level set is an event.

Scores are finite. A row in a cell no training row fell in (an unseen discrete value) scores
log(n_P / n_Q), as if it were equally likely under both sides. The scorer applies when the cells
are well filled: fitting raises ValueError when the occupied cells average fewer than `min_rows`
training rows each (e.g. 12-dim Gaussian outputs, where nearly every row is its own cell), which
`audit(scorer="auto")` records as a skipped candidate at the cost of one pass over the first
rung's rows.
"""

from __future__ import annotations

import numpy as np

from .preprocessing import column_atoms, in_chunks, training_set

PRIOR = 0.5  # pseudo-count a of each cell on each side


class _Column:
    """Codes of one column: 0 .. n_atoms - 1 for the atoms, then the bins between `edges` (values
    beyond the training range in the end bins), or n_atoms for a value of a discrete column never
    seen in training."""

    def __init__(self, values: np.ndarray, labels: np.ndarray, max_atoms: int, atom_rows: int, bins: int | None):
        self.atoms, discrete = column_atoms(values, max_atoms, atom_rows)
        if discrete:
            self.edges = np.empty(0)
            return
        rest = ~np.isin(values, self.atoms)
        if not rest.any():
            self.edges = np.empty(0)
            return
        spread = values[rest]
        n_bins = bins or int(np.clip(round(spread.size ** (1 / 3)), 4, 256))
        ends = [f(spread[side]) for side in (labels[rest] == 1, labels[rest] == 0) if side.any() for f in (np.min, np.max)]
        quantiles = np.quantile(spread, np.linspace(0, 1, n_bins + 1))
        # Bins are [edge_i, edge_{i+1}); the largest value closes the last bin, hence nextafter.
        self.edges = np.unique(np.concatenate([quantiles, ends, [np.nextafter(spread.max(), np.inf)]]))

    @property
    def size(self) -> int:
        return self.atoms.size + max(self.edges.size, 1)  # atoms, the unseen-atom code (or the bins)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        where = np.searchsorted(self.atoms, values)
        is_atom = np.zeros(values.shape, bool)
        if self.atoms.size:
            is_atom = self.atoms[np.minimum(where, self.atoms.size - 1)] == values
        if self.edges.size == 0:
            return np.where(is_atom, where, self.atoms.size)  # a value never seen in training
        # values beyond the training range join the end bins
        bins = np.clip(np.searchsorted(self.edges, values, side="right"), 1, self.edges.size - 1)
        return np.where(is_atom, where, self.atoms.size + bins - 1)


class DensityScorer:
    """Smoothed cell-count estimate of log p/q for discrete or low-dimensional outputs (module doc).

    max_atoms : a column with at most this many distinct training values is discrete.
    atom_rows : in other columns, a value repeated this often keeps its own code.
    bins : quantile bins per non-discrete column (default: cube root of its non-atom rows, 4..256).
    min_rows : fitting fails (ValueError) unless the occupied cells average at least this many rows.
    max_fit : training rows used per side.
    """

    name = "density"

    def __init__(self, max_atoms: int = 64, atom_rows: int = 50, bins: int | None = None, min_rows: int = 25,
                 max_fit: int = 10**6):
        self.max_atoms, self.atom_rows, self.bins = max_atoms, atom_rows, bins
        self.min_rows, self.max_fit = min_rows, max_fit

    def fit(self, X_p, X_q, seed=0):
        X, y = training_set(X_p, X_q, self.max_fit)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"the density scorer needs a non-empty 2-D feature array, got shape {X.shape}")
        self._columns = []
        keys = np.zeros(len(X), dtype=np.int64)
        radix = 1
        for j in range(X.shape[1]):
            column = _Column(X[:, j], y, self.max_atoms, self.atom_rows, self.bins)
            radix *= column.size
            if radix >= 2**62:
                raise ValueError(f"the density scorer does not apply: {X.shape[1]} columns give more than 2^62 cells")
            keys = keys * column.size + column(X[:, j])
            self._columns.append(column)
        cells, index = np.unique(keys, return_inverse=True)
        if len(X) < self.min_rows * cells.size:
            raise ValueError(f"the density scorer does not apply: {cells.size:,} occupied cells for {len(X):,} rows "
                             f"(fewer than {self.min_rows} per cell; the outputs are neither discrete nor low-dimensional)")
        n_p, n_q = int(y.sum()), int(len(y) - y.sum())
        c_p = np.bincount(index, weights=y, minlength=cells.size)
        c_q = np.bincount(index, minlength=cells.size) - c_p
        self._cells = cells
        self._log_odds = np.log((c_p + PRIOR) / n_p) - np.log((c_q + PRIOR) / n_q)
        self._unseen = float(np.log(n_p / n_q))
        return self

    def _keys(self, X):
        keys = np.zeros(len(X), dtype=np.int64)
        for j, column in enumerate(self._columns):
            keys = keys * column.size + column(X[:, j])
        return keys

    def log_odds(self, X):
        def chunk(c):
            keys = self._keys(c)
            where = np.minimum(np.searchsorted(self._cells, keys), self._cells.size - 1)
            return np.where(self._cells[where] == keys, self._log_odds[where], self._unseen)

        return in_chunks(chunk, X)
