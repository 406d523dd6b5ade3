"""The papers' estimator (Eureka; Lu, Magdon-Ismail, Wei & Zikas, IEEE S&P 2024), kept to reproduce them.

For an ordered pair (P, Q) = (M(D1), M(D0)) and each eps, class 1 is P mixed with a dummy output
"bottom" (P with probability e^-eps, bottom otherwise) and class 0 is Q; the Bayes accuracy of
this balanced problem is 1 - e^-eps (1 - delta_{P||Q}(eps)) / 2, so a classifier's test accuracy
gives delta-hat = max(0, 1 - 2 e^eps (1 - acc)) (Lu, Magdon-Ismail, Wei & Zikas 2024). One classifier is
trained per eps and per direction; dummies are dropped from training and count as correct in the
test set. The default classifier is k-NN with k = 10 ceil(sqrt(n_train)) made odd.

Lower bound: a classifier's accuracy is at most the Bayes accuracy, so an exact lower confidence
bound on its test accuracy (Clopper-Pearson per class, union over classes, eps and directions)
gives a valid lower bound on delta in any dimension, unlike the paper's k-NN radius (which is
reported as `paper_radius` for reproduction).
"""

from __future__ import annotations

import numpy as np

from ..core.curve import Curve
from .sampling import chunks
from .scoring import features as features_module
from .scoring.mlp import MLPScorer
from .scoring.preprocessing import power_of_two_unit
from .statistics import bounds

_MASK_KEY = 3  # spawn-key prefix of the dummy masks


def knn_k(n_train: int) -> int:
    """k = 10 ceil(sqrt(n_train)), made odd (the choice of the Eureka authors' code)."""
    k = 10 * int(np.ceil(np.sqrt(n_train)))
    return k + 1 if k % 2 == 0 else k


def knn_predict_1d(train_x, train_y, query, k):
    """Exact k-NN majority vote for 1-D data in O((n + m) log n): the k nearest points of a query
    form a window of k consecutive sorted training points, found by a vectorised binary search."""
    order = np.argsort(train_x, kind="stable")
    a, labels = train_x[order], train_y[order]
    n = a.size
    k = min(k, n)
    ones = np.concatenate([[0], np.cumsum(labels)])
    pos = np.searchsorted(a, query)
    lo, hi = np.maximum(pos - k, 0), np.minimum(pos, n - k)
    # first start s in [lo, hi] with query - a[s] <= a[s + k] - query (hi when none)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        right = np.minimum(mid + k, n - 1)
        move_left = (query - a[mid] <= a[right] - query) | (mid + k >= n)
        hi = np.where(move_left & (lo < hi), mid, hi)
        lo = np.where(~move_left & (lo < hi), mid + 1, lo)
    votes = ones[lo + k] - ones[lo]
    return (2 * votes > k).astype(int)


def _knn_predict(train_x, train_y, query, k):
    if train_x.shape[1] == 1:
        return knn_predict_1d(train_x[:, 0], train_y, query[:, 0], k)
    from sklearn.neighbors import KNeighborsClassifier

    unit = power_of_two_unit(train_x)  # Euclidean distances of large outputs would overflow; neighbours unchanged
    model = KNeighborsClassifier(n_neighbors=min(k, len(train_x)), algorithm="kd_tree")
    return model.fit(train_x / unit, train_y).predict(query / unit).astype(int)


def _mlp_predict(train_x, train_y, query, seed):
    scorer = MLPScorer().fit(train_x[train_y == 1], train_x[train_y == 0], seed=seed)
    return (scorer.log_odds(query) > 0).astype(int)


def paper_radius(eps, n_train, n_test, dim, gamma=0.01):
    """The paper's error radius mu = 2 e^eps (12 c_d sqrt(ln(4/gamma)/(2 n_train)) +
    sqrt(ln(4/gamma)/(2 n_test))), c_d = (1 + 2/sqrt(2 - sqrt 3))^d - 1 (the k-NN error bound of
    Lu, Magdon-Ismail, Wei & Zikas 2024)."""
    c_d = (1 + 2 / np.sqrt(2 - np.sqrt(3))) ** dim - 1
    term = np.log(4 / gamma)
    return 2 * np.exp(eps) * (12 * c_d * np.sqrt(term / (2 * n_train)) + np.sqrt(term / (2 * n_test)))


def accuracy_to_delta(acc, eps):
    """delta = max(0, 1 - 2 e^eps (1 - acc)): the Bayes accuracy 1 - e^-eps (1 - delta) / 2 of the
    dummy-augmented problem solved for delta (Lu, Magdon-Ismail, Wei & Zikas 2024)."""
    return np.maximum(0.0, 1.0 - 2.0 * np.exp(eps) * (1.0 - np.asarray(acc, dtype=float)))


def _floor(eps, n0, n1, level):
    """Smallest delta-hat whose Eureka lower bound can be positive (all class-1 tests correct)."""
    out = np.ones(len(eps))
    best1 = bounds.clopper_pearson_lower(n1, n1, level)
    for i, e in enumerate(eps):
        need = 2.0 - np.exp(-e) - best1  # CP_lower(c0) must exceed this
        if bounds.clopper_pearson_lower(n0, n0, level) <= need:
            continue
        lo, hi = 0, n0
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if bounds.clopper_pearson_lower(mid, n0, level) > need else (mid, hi)
        out[i] = float(accuracy_to_delta((hi / n0 + 1.0) / 2.0, e))
    return out


def eureka_spectrum(draws, eps, n_samples, root, executor, chunk, shape, alpha, features, mech, name="mechanism",
                    classifier: str = "knn", k: int | None = None, train_fraction: float = 0.5):
    """Eureka delta-hat per eps for both directions, with accuracy-based bounds (see module doc).

    `draws` are the prepared samplers of D and D' (`sampling`); returns {estimate, lower, upper}
    as Curves, the floor and info.
    """
    n_train = int(n_samples * train_fraction)
    n_test = int(n_samples) - n_train
    if min(n_train, n_test) < 50:
        raise ValueError(f"n_samples={n_samples} is too small for the Eureka estimator (need >= 100 per side)")
    _, feature_map = features_module.resolve(features, mech)
    samples = [chunks.draw(executor, draw, n_samples, root, (side, 0), chunk, shape, feature_map,
                             desc=f"sampling ({label})", name=name)
               for side, (draw, label) in enumerate(zip(draws, ("D", "D'")))]
    level = alpha / (2 * 2 * len(eps))  # two classes, two directions, every eps
    curves = {"estimate": {}, "lower": {}, "upper": {}}
    for d_index, direction in enumerate(("forward", "reverse")):
        pos, neg = (samples[0], samples[1]) if direction == "forward" else (samples[1], samples[0])
        for part in curves.values():
            part[direction] = np.empty(len(eps))
        for i, e in enumerate(eps):
            rng = np.random.default_rng(chunks.chunk_seed(root, _MASK_KEY, d_index, i))
            keep = rng.random(n_samples) < np.exp(-e)  # class-1 draws that are not the dummy
            train_pos, test_pos = pos[:n_train][keep[:n_train]], pos[n_train:][keep[n_train:]]
            train_x = np.concatenate([train_pos, neg[:n_train]])
            train_y = np.concatenate([np.ones(len(train_pos), int), np.zeros(n_train, int)])
            query = np.concatenate([test_pos, neg[n_train:]])
            if classifier == "knn":
                predicted = _knn_predict(train_x, train_y, query, k or knn_k(2 * n_train))
            elif classifier == "mlp":
                predicted = _mlp_predict(train_x, train_y, query, int(rng.integers(2**31)))
            else:
                raise ValueError(f"unknown Eureka classifier {classifier!r}; allowed: 'knn', 'mlp'")
            dummies = n_test - len(test_pos)
            correct1 = dummies + int(np.sum(predicted[:len(test_pos)] == 1))
            correct0 = int(np.sum(predicted[len(test_pos):] == 0))
            acc = (correct0 + correct1) / (2 * n_test)
            acc_low = (bounds.clopper_pearson_lower(correct0, n_test, level)
                       + bounds.clopper_pearson_lower(correct1, n_test, level)) / 2
            acc_up = (bounds.clopper_pearson_upper(correct0, n_test, level)
                      + bounds.clopper_pearson_upper(correct1, n_test, level)) / 2
            curves["estimate"][direction][i] = accuracy_to_delta(acc, e)
            curves["lower"][direction][i] = accuracy_to_delta(acc_low, e)
            curves["upper"][direction][i] = accuracy_to_delta(acc_up, e)
    dim = samples[0].shape[1]
    info = {"scorer": f"eureka-{classifier}", "sizes": {"train": n_train, "test": n_test},
            "paper_radius": paper_radius(eps, n_train, n_test, dim), "k": k or knn_k(2 * n_train)}
    return dict(**{kind: Curve(eps, **part) for kind, part in curves.items()},
                floor=_floor(eps, n_test, n_test, level), info=info)
