"""Score functions: classifiers of M(D) (label 1) against M(D') (label 0) returning log-odds.

With balanced classes the Bayes log-odds equal the log-likelihood ratio log(p/q), whose level sets
are the optimal events of every hockey-stick divergence (Neyman-Pearson), so each scorer is trained
to estimate it and is compared with the others by held-out log-loss.

Every scorer has `fit(X_p, X_q, seed)` and `score(X) -> (n,) log-odds`; `max_fit` caps the number
of training rows used per side (samples are i.i.d., so the first rows are a random subsample).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_expit
from sklearn.linear_model import LogisticRegression

NAMES = ("quadratic", "knn", "mlp", "boosting")
AUTO_CANDIDATES = ("quadratic", "boosting", "mlp")
_SCORE_CHUNK = 100_000


def _training_set(X_p, X_q, max_fit):
    X_p, X_q = np.asarray(X_p, float)[:max_fit], np.asarray(X_q, float)[:max_fit]
    X = np.concatenate([X_p, X_q])
    y = np.concatenate([np.ones(len(X_p)), np.zeros(len(X_q))])
    return X, y


def _in_chunks(function, X):
    X = np.asarray(X, dtype=float)
    return np.concatenate([function(X[i:i + _SCORE_CHUNK]) for i in range(0, max(len(X), 1), _SCORE_CHUNK)])


class _Standardiser:
    """Affine map to zero mean, unit variance per column (constant columns left unscaled)."""

    def fit(self, X):
        self.mean = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale = np.where(scale > 0, scale, 1.0)
        return self

    def __call__(self, X):
        return (X - self.mean) / self.scale


class _Whitener:
    """Affine map to zero mean and identity covariance (x - m) L^-T, S = L L^T (eigenvalues floored
    at 1e-12 of the largest, so that a degenerate feature does not blow up)."""

    def fit(self, X):
        self.mean = X.mean(axis=0)
        values, vectors = np.linalg.eigh(np.atleast_2d(np.cov(X, rowvar=False)))
        values = np.maximum(values, 1e-12 * max(values.max(), 1e-300))
        self.transform = vectors / np.sqrt(values)
        return self

    def __call__(self, X):
        return (X - self.mean) @ self.transform


class QuadraticScorer:
    """Logistic regression on [z, upper triangle of z z^T] of the whitened features z.

    The log density ratio of two Gaussians N(m1, S1), N(m2, S2) is a quadratic form in x, so this
    family contains the exact log-likelihood ratio of any Gaussian pair (spec ndis-als-rp.md §2.3);
    for Gaussian outputs it is the right model, with k + k(k+1)/2 parameters for k features.
    Whitening with the pooled covariance makes the quadratic terms nearly uncorrelated, so L-BFGS
    converges in a few dozen iterations even for strongly correlated outputs (e.g. ALS).
    """

    name = "quadratic"

    def __init__(self, C: float = 1e4, max_fit: int = 250_000, max_terms: int = 2_500, threads: int | None = 1):
        self.C, self.max_fit, self.max_terms, self.threads = C, max_fit, max_terms, threads

    def _expand(self, X):
        Z = self._inner(X)
        rows, cols = np.triu_indices(Z.shape[1])
        return np.concatenate([Z, Z[:, rows] * Z[:, cols]], axis=1)

    def fit(self, X_p, X_q, seed=0):
        """Fit with `threads` BLAS threads (1 by default, see `BoostingScorer.fit`)."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(self.threads):
            return self._fit(X_p, X_q)

    def _fit(self, X_p, X_q):
        X, y = _training_set(X_p, X_q, self.max_fit)
        k = X.shape[1]
        terms = k + k * (k + 1) // 2
        if terms > self.max_terms:
            raise ValueError(
                f"the quadratic scorer would need {terms} terms for {k} features (max_terms={self.max_terms}); "
                "use features='gram' or a smaller feature map, or scorer='mlp'/'boosting'"
            )
        self._inner = _Whitener().fit(X)
        E = self._expand(X)
        self._outer = _Standardiser().fit(E)
        self.model = LogisticRegression(C=self.C, max_iter=1000, tol=1e-6)
        self.model.fit(self._outer(E), y)
        return self

    def score(self, X):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(self.threads):
            return _in_chunks(lambda c: self.model.decision_function(self._outer(self._expand(c))), X)


class KNNScorer:
    """k-nearest-neighbour log-odds log((k_P + 1/2) / (k_Q + 1/2)) on standardised features.

    k defaults to the odd integer nearest sqrt(n_fit) (consistent as n grows, spec §7.2); queries
    cost O(k log n) each, hence the small default `max_fit`.
    """

    name = "knn"

    def __init__(self, k: int | None = None, max_fit: int = 20_000):
        self.k, self.max_fit = k, max_fit

    def fit(self, X_p, X_q, seed=0):
        from sklearn.neighbors import KDTree

        X, y = _training_set(X_p, X_q, self.max_fit)
        self._scale = _Standardiser().fit(X)
        self.k_ = self.k or int(2 * (np.sqrt(len(X)) // 2) + 1)
        if not 1 <= self.k_ <= len(X):
            raise ValueError(f"k must lie in [1, {len(X)}], got {self.k_}")
        self._tree = KDTree(self._scale(X))
        self._labels = y
        return self

    def score(self, X):
        def chunk(c):
            _, index = self._tree.query(self._scale(c), k=self.k_)
            k_p = self._labels[index].sum(axis=1)
            return np.log((k_p + 0.5) / (self.k_ - k_p + 0.5))

        return _in_chunks(chunk, X)


class BoostingScorer:
    """Histogram gradient boosting (scikit-learn) with early stopping; decision function = log-odds."""

    name = "boosting"

    def __init__(self, max_iter: int = 150, learning_rate: float = 0.15, max_fit: int = 200_000,
                 threads: int | None = 1):
        self.max_iter, self.learning_rate, self.max_fit, self.threads = max_iter, learning_rate, max_fit, threads

    def fit(self, X_p, X_q, seed=0):
        """Fit with `threads` OpenMP threads (1 by default: on small shared machines OpenMP spinning
        costs far more than it gains; None leaves the library default)."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(self.threads):
            return self._fit(X_p, X_q, seed)

    def _fit(self, X_p, X_q, seed):
        from sklearn.ensemble import HistGradientBoostingClassifier

        X, y = _training_set(X_p, X_q, self.max_fit)
        self.model = HistGradientBoostingClassifier(
            max_iter=self.max_iter, learning_rate=self.learning_rate, early_stopping=True,
            validation_fraction=0.1, n_iter_no_change=10, random_state=int(seed) % 2**32,
        )
        self.model.fit(X, y)
        return self

    def score(self, X):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(self.threads):
            return _in_chunks(self.model.decision_function, X)


def make(name: str, **options):
    """A fresh scorer by name (one of NAMES)."""
    if name == "quadratic":
        return QuadraticScorer(**options)
    if name == "knn":
        return KNNScorer(**options)
    if name == "boosting":
        return BoostingScorer(**options)
    if name == "mlp":
        from .mlp import MLPScorer

        return MLPScorer(**options)
    raise ValueError(f"unknown scorer {name!r}; allowed: 'auto', {', '.join(map(repr, NAMES))} or a scorer object")


def log_loss(scorer, X_p, X_q) -> float:
    """Balanced binary cross-entropy of the scorer's log-odds on (X_p label 1, X_q label 0), in nats."""
    s_p, s_q = scorer.score(X_p), scorer.score(X_q)
    return float(-(np.mean(log_expit(s_p)) + np.mean(log_expit(-s_q))) / 2)
