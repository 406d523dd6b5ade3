"""Choosing the score function: successive halving over the candidate (feature map, scorer) pairs.

Every candidate is first fitted on a small share of the fitting rows (`RUNGS`) and scored on the
whole validation split; a candidate whose validation log-loss exceeds the best one's by more than
`Z` standard errors of the loss difference (estimated from the per-row loss differences, which are
independent across rows) is dropped; the survivors are refitted on more rows, and the last rung
uses all of them. The chosen candidate is the survivor of least log-loss on the last rung, fitted
on all rows with the same seed as without halving, so when it is the candidate a full comparison
would pick, the audit is unchanged. With fewer than `MIN_ROWS` rows per side in the first rung, or
a single candidate, everything is fitted on all rows at once.

Before any fit, a candidate may be settled without training: when the quadratic scorer is a candidate
on the same features and both sides' validation rows pass Mardia's (1970) tests of multivariate
normality (`gaussian_pvalue`), the exact log-likelihood ratio is a quadratic form, so no other model
can have a smaller expected loss; the others (the MLP above all, whose torch import alone costs
seconds) are skipped, and the quadratic is replaced by its maximum-likelihood member under normality,
the Gaussian plug-in (`scorers.GaussianScorer`, QDA's discriminant: two means and covariances instead
of a logistic regression, which imports scikit-learn). A wrong pass costs power only: every candidate's
bounds are tested on held-out rows it has not seen.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.special import chdtrc, log_expit, ndtr

from .preprocessing import power_of_two_unit

RUNGS = (1 / 8, 1.0)  # shares of the fitting rows per rung
Z = 4.0  # a candidate is dropped when its loss exceeds the best one's by more than Z standard errors
MIN_ROWS = 2_000  # rows per side of the smallest first rung worth running
GAUSS_ROWS = 20_000  # validation rows per side tested for normality
#: The family-wise level of the four normality tests (skewness and kurtosis of both sides), Bonferroni:
#: Gaussian outputs fail them in at most 0.1% of audits (at 0.01 per test, 3.7% of the README job's seeds
#: fell back to training every candidate), while on 20,000 rows a test rejects a departure of 3.7 of its
#: standard errors (2.6 at 0.01 per test), e.g. a multivariate kurtosis off by 2.6% in two dimensions.
GAUSS_LEVEL = 0.001
GAUSS_TESTS = 4
GAUSS_MAX_FEATURES = 32  # wider features are not tested (the skewness costs k^3 per row)


def gaussian_pvalue(X) -> float:
    """The smaller p-value of Mardia's (1970) multivariate skewness and kurtosis tests of normality
    on the first `GAUSS_ROWS` rows of X; 0 when they cannot support normality (fewer than 100 rows,
    more than `GAUSS_MAX_FEATURES` features, a singular covariance, or a column with more than 1%
    repeated values: a discrete law; float32 rounding of a continuous one repeats far fewer).

    With z the rows whitened by their own mean and covariance, skewness b1 = sum over (a, b, c) of
    mean(z_a z_b z_c)^2 and kurtosis b2 = mean(|z|^4); under normality n b1 / 6 is chi-square with
    k(k+1)(k+2)/6 degrees of freedom and b2 is normal with mean k(k+2) and variance 8k(k+2)/n.
    """
    X = np.asarray(X, dtype=float)
    X = X.reshape(len(X), -1)[:GAUSS_ROWS]
    n, k = X.shape
    if n < 100 or k > GAUSS_MAX_FEATURES or any(np.unique(column).size < 0.99 * n for column in X.T):
        return 0.0
    X = X / power_of_two_unit(X)  # the statistics are affine invariant; sums of squares must not overflow
    Z = X - X.mean(axis=0)
    values, vectors = np.linalg.eigh(Z.T @ Z / n)
    if values[0] <= 1e-12 * values[-1]:
        return 0.0
    Z = Z @ (vectors / np.sqrt(values))
    b1 = sum(float(np.sum(((Z * Z[:, [a]]).T @ Z / n) ** 2)) for a in range(k))
    b2 = float(np.mean(np.sum(Z**2, axis=1) ** 2))
    skewness = float(chdtrc(k * (k + 1) * (k + 2) / 6, n * b1 / 6))
    kurtosis = float(2 * ndtr(-abs(b2 - k * (k + 2)) / np.sqrt(8 * k * (k + 2) / n)))
    return min(skewness, kurtosis)


def checked_log_odds(scorer, X, label: str) -> np.ndarray:
    """scorer.log_odds(X), checked to be one number per row of X: a ValueError naming the scorer
    (`label`) when it has another shape or holds NaN, which no event of the audit could be tested on.
    Infinite log-odds are allowed: a row that one side cannot produce."""
    scores = np.asarray(scorer.log_odds(X), dtype=float)
    if scores.shape != (len(X),):
        raise ValueError(f"the scorer {label!r} returned log-odds of shape {scores.shape} for {len(X)} rows; "
                         f"log_odds(X) must return one number per row, shape ({len(X)},)")
    bad = int(np.isnan(scores).sum())
    if bad:
        raise ValueError(f"the scorer {label!r} returned NaN log-odds for {bad:,} of {len(X):,} validation rows "
                         "(an overflow, or a bug in the scorer); no spectrum can be estimated from them")
    return scores


def row_losses(scorer, X_p, X_q, label: str = "scorer") -> tuple[np.ndarray, np.ndarray]:
    """Per-row cross-entropies of the scorer's log-odds on (X_p label 1, X_q label 0), in nats
    (`checked_log_odds`). A ValueError when the scorer calls a row impossible on the side it was
    drawn from (log-odds -inf for a row of P, +inf for a row of Q): an overflow or a broken scorer,
    whose level sets would test nothing."""
    scores_p, scores_q = checked_log_odds(scorer, X_p, label), checked_log_odds(scorer, X_q, label)
    wrong_p, wrong_q = int(np.sum(scores_p == -np.inf)), int(np.sum(scores_q == np.inf))
    if wrong_p or wrong_q:
        raise ValueError(f"the scorer {label!r} returned log-odds -inf for {wrong_p:,} validation rows drawn from M(D) "
                         f"and +inf for {wrong_q:,} drawn from M(D'), calling outputs that occurred impossible (an "
                         "overflow, or a bug in the scorer)")
    return -log_expit(scores_p), -log_expit(-scores_q)


def log_loss(scorer, X_p, X_q) -> float:
    """Balanced binary cross-entropy of the scorer's log-odds on (X_p label 1, X_q label 0), in nats."""
    loss_p, loss_q = row_losses(scorer, X_p, X_q)
    return float((loss_p.mean() + loss_q.mean()) / 2)


def loss_gap(a, b) -> tuple[float, float]:
    """(mean balanced loss of a - that of b, its standard error), from per-row losses (p, q)."""
    d_p, d_q = a[0] - b[0], a[1] - b[1]
    gap = (d_p.mean() + d_q.mean()) / 2
    se = np.sqrt(d_p.var(ddof=1) / d_p.size + d_q.var(ddof=1) / d_q.size) / 2
    return float(gap), float(se)


def rung_sizes(n_fit: int, n_candidates: int) -> list[int]:
    """Fitting rows per side of each rung: all of them at once unless halving is worth it."""
    if n_candidates < 2 or int(n_fit * RUNGS[0]) < MIN_ROWS:
        return [n_fit]
    return [int(n_fit * share) for share in RUNGS]


def gaussian_pvalue_of_pair(X_p, X_q) -> float:
    """The Bonferroni-adjusted p-value min(1, 4 min p) of Mardia's four tests on both sides' rows."""
    return min(1.0, GAUSS_TESTS * min(gaussian_pvalue(X_p), gaussian_pvalue(X_q)))


def gaussian_skips(candidates, X_valid, quadratic_of, gaussian_of=None) -> tuple[dict[str, str], list[str]]:
    """({label: reason} of the candidates not worth training, [the Gaussian plug-ins to fit instead]).

    The candidates other than a quadratic one on the same features (`quadratic_of[label]`) are skipped
    when that quadratic's validation rows of both sides pass Mardia's tests (`gaussian_pvalue_of_pair`
    >= `GAUSS_LEVEL`); the quadratic itself is then skipped too, replaced by `gaussian_of[quadratic]`
    (the Gaussian plug-in on the same features), when given. A quadratic without other candidates on
    its features (scorer="quadratic") is left as it is."""
    skips, added = {}, []
    for quadratic in dict.fromkeys(quadratic_of.get(label) for label in candidates):
        others = [label for label in candidates if quadratic_of.get(label) == quadratic and label != quadratic]
        if quadratic not in candidates or not others:
            continue
        p_value = gaussian_pvalue_of_pair(*X_valid[quadratic])
        if p_value < GAUSS_LEVEL:
            continue
        optimal = gaussian_of.get(quadratic, quadratic) if gaussian_of else quadratic
        reason = (f"skipped: both sides pass Mardia's normality tests (Bonferroni-adjusted p = {p_value:.3g} of "
                  f"{GAUSS_TESTS} tests on {min(GAUSS_ROWS, len(X_valid[quadratic][0])):,} validation rows per side, "
                  f"level {GAUSS_LEVEL:g}), so {optimal} holds the exact log-likelihood ratio")
        skips.update(dict.fromkeys(others, reason))
        if optimal != quadratic:
            skips[quadratic] = reason + ", fitted instead"
            added.append(optimal)
    return skips, added


def successive_halving(candidates, fit, X_valid, n_fit: int, advance, quadratic_of=None, gaussian_of=None):
    """The best candidate by validation log-loss, and the record of the selection.

    candidates : labels; fit(label, rows) -> a scorer fitted on the first `rows` fitting rows per
        side (or raises ValueError: the candidate is skipped, unless it is the only one).
    X_valid : {label: (validation rows of P, of Q)} in each candidate's features.
    advance(k) : called as k more candidates are settled (dropped, skipped or fitted on all rows).
    quadratic_of : {label: the quadratic candidate on the same features} (optional): a candidate is
        skipped untrained when that quadratic's validation rows look Gaussian (`gaussian_skips`).
    gaussian_of : {quadratic label: the Gaussian plug-in's label on the same features} (optional): fitted
        in the quadratic's place when it passes; `fit` and `X_valid` must know these labels too.

    Returns (label, fitted scorer, losses, rounds): losses maps every label to its last validation
    log-loss (or "skipped: reason"); rounds lists per rung the rows fitted, the losses, the fit
    times and the labels dropped with their gap and standard error to the best.
    """
    losses, added = gaussian_skips(candidates, X_valid, quadratic_of or {}, gaussian_of)
    advance(len(losses) - len(added))  # a plug-in takes its quadratic's place in the count
    rounds, alive = [], [label for label in candidates if label not in losses] + added
    sizes = rung_sizes(n_fit, len(alive))
    for rung, rows in enumerate(sizes):
        fitted, per_row, seconds = {}, {}, {}
        for label in alive:
            started = time.perf_counter()
            try:
                fitted[label] = fit(label, rows)
                seconds[label] = time.perf_counter() - started
            except ValueError as error:
                if len(candidates) == 1:
                    raise
                losses[label] = f"skipped: {error}"
                advance(1)
                continue
            per_row[label] = row_losses(fitted[label], *X_valid[label], label)
            losses[label] = float((per_row[label][0].mean() + per_row[label][1].mean()) / 2)
        failed, alive = [label for label in alive if label not in per_row], list(per_row)
        if quadratic_of and (not alive or set(failed) & set(added)):
            # the quadratic or a plug-in could not be fitted: train the skipped ones after all
            return successive_halving(candidates, fit, X_valid, n_fit, advance)
        if not alive:
            raise ValueError("no scorer could be fitted: " + "; ".join(f"{k}: {v}" for k, v in losses.items()))
        best = min(alive, key=losses.get)
        record = {"fit_rows_per_side": rows, "losses": {label: losses[label] for label in alive},
                  "fit_seconds": seconds, "dropped": {}}
        rounds.append(record)
        if rung == len(sizes) - 1:
            advance(len(alive))
            return best, fitted[best], losses, rounds
        for label in alive:
            gap, se = loss_gap(per_row[label], per_row[best])
            if label != best and gap > Z * se:
                record["dropped"][label] = {"gap": gap, "standard_error": se}
                advance(1)
        alive = [label for label in alive if label not in record["dropped"]]
