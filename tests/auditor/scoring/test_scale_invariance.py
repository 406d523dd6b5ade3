"""Scorers are invariant to the units of the outputs: outputs multiplied by 1e-150 or 1e160 (finite, but
their squares under- or overflow float64) give the scores, and so the audit, of the unscaled outputs.

Before the preprocessing computed its moments in units of a power of two, the quadratic scorer's
whitening overflowed at 1e160 (a RuntimeWarning only) and the audit of x + N(0, 1) on the inputs 0
and 1 reported delta = 0 at every eps, while the truth is delta(0.1) = 0.345."""

import numpy as np
import pytest

from ndis.auditor import audit
from ndis.auditor.scoring import features, scorers, selection
from ndis.auditor.scoring.preprocessing import Standardiser, Whitener

from tests.auditor.conftest import gaussian_delta_reference

SCALES = (1e-150, 1e160)
BUILT_IN = ("quadratic", "gaussian", "knn", "mlp", "boosting", "density", "spline", "segments")


def _pair(n, dims=2, seed=0):
    """P = N((1, 0), diag(1, 2.25)), Q = N(0, I) (a mean and a variance shift), or their first coordinates."""
    rng = np.random.default_rng(seed)
    X_p, X_q = rng.normal(size=(n, 2)) * [1.0, 1.5] + [1.0, 0.0], rng.normal(size=(n, 2))
    return X_p[:, :dims], X_q[:, :dims]


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_scorer_gives_the_same_log_odds_at_any_scale(name):
    # Multiplying by 1e160 rounds each output once (relative error 1.1e-16), so the fits see data equal
    # to the unscaled data up to rounding; the log-odds then agree to far better than 1e-6 (tree and
    # cell scorers, whose splits are order statistics, exactly). The scale 2^500 is exact in binary
    # floating point: the log-odds must be bit for bit those of the unscaled outputs.
    if name == "mlp":
        pytest.importorskip("torch")
    X_p, X_q = _pair(3_000, dims=1 if name in ("density", "segments") else 2)  # their cells need 1-D here
    options = {"epochs": 2} if name == "mlp" else {}
    reference = scorers.make(name, **options).fit(X_p, X_q, seed=1).log_odds(X_p[:500])
    assert np.all(np.isfinite(reference))
    exact = 2.0**500
    scaled = scorers.make(name, **options).fit(X_p * exact, X_q * exact, seed=1).log_odds(X_p[:500] * exact)
    np.testing.assert_array_equal(scaled, reference)
    for scale in SCALES:
        scaled = scorers.make(name, **options).fit(X_p * scale, X_q * scale, seed=1).log_odds(X_p[:500] * scale)
        np.testing.assert_allclose(scaled, reference, rtol=1e-6, atol=1e-6, err_msg=f"{name} at scale {scale}")


def test_the_standardiser_and_whitener_do_not_overflow_and_commute_with_powers_of_two():
    X, _ = _pair(2_000)
    for transform in (Standardiser, Whitener):
        reference = transform().fit(X)(X)
        for scale in (2.0**-1000, 2.0**1000):
            np.testing.assert_array_equal(transform().fit(X * scale)(X * scale), reference)
        big = transform().fit(X * 1e300)(X * 1e300)
        np.testing.assert_allclose(big, reference, rtol=1e-9, atol=1e-9)
    z = Whitener().fit(X * 1e200)(X * 1e200)
    np.testing.assert_allclose(np.cov(z, rowvar=False), np.eye(2), atol=1e-9)


def test_the_normality_check_is_scale_invariant():
    # Mardia's statistics are affine invariant; their sums of squares must not overflow either.
    X, _ = _pair(2_000)
    reference = selection.gaussian_pvalue(X)
    assert reference > 0.01
    assert selection.gaussian_pvalue(X * 1e160) == pytest.approx(reference, rel=1e-9)
    assert selection.gaussian_pvalue(X * 2.0**600) == reference


def test_gram_features_that_overflow_are_a_clear_error():
    with pytest.raises(ValueError, match="gram features overflow"):
        features.gram(np.full((2, 3, 2), 1e160))


def _gaussian(scale):
    """x + N(0, 1) on the one-number dataset x, outputs multiplied by `scale`."""

    def mechanism(data, n, rng):
        return (float(np.ravel(data)[0]) + rng.standard_normal((n, 1))) * scale

    return mechanism


EPS = np.array([0.0, 0.1, 0.5, 1.0])


@pytest.mark.parametrize("scorer", ["quadratic", "knn", "auto"])
def test_an_audit_of_scaled_outputs_finds_the_same_delta(scorer):
    # The reproduction: delta(0.1) of N(0, 1) against N(1, 1) is 0.345, and the audit of the
    # outputs times 1e160 said 0 (quadratic) or 0 (knn: its standard deviations overflowed to inf).
    # 10,000 samples per side leave 5,000 held-out ones. Same seed, same samples up to one rounding:
    # the estimates are identical or, where a held-out score sits within rounding of a threshold,
    # differ by a count or two (1/5,000 each); the estimate itself is within 4 standard errors
    # (sd <= 1/2 per side and sample) of the truth.
    kwargs = dict(eps=EPS, n_samples=10_000, seed=3, scorer=scorer, progress=False)
    reference = audit(_gaussian(1.0), 0.0, 1.0, **kwargs)
    truth = gaussian_delta_reference(EPS, 1.0)
    np.testing.assert_allclose(reference.delta, truth, atol=4 * 0.5 * np.sqrt(2 / 5_000))
    for scale in (1e-150, 1e160, 1e200):
        report = audit(_gaussian(scale), 0.0, 1.0, **kwargs)
        np.testing.assert_allclose(report.delta, reference.delta, rtol=0, atol=3 / 5_000, err_msg=f"scale {scale}")
        np.testing.assert_allclose(report.delta_lower, reference.delta_lower, rtol=0, atol=3 / 5_000)


class NaNScorer:
    name = "broken"

    def fit(self, X_p, X_q, seed=0):
        return self

    def log_odds(self, X):
        out = np.asarray(X, dtype=float)[:, 0].copy()
        out[::7] = np.nan
        return out


def test_a_scorer_returning_nan_is_an_error_naming_it():
    with pytest.raises(ValueError, match="scorer 'broken/flatten' returned NaN log-odds for"):
        audit(_gaussian(1.0), 0.0, 1.0, eps=EPS, n_samples=4_000, seed=0, scorer=NaNScorer(), progress=False)



def test_the_eureka_classifier_is_scale_invariant():
    # Eureka's k-NN classifier measured Euclidean distances between 2-D outputs of 1e160, whose squares
    # overflowed: every prediction tied, and an audit with method="eureka" estimated delta = 0 (0.38 at
    # scale 1). Distances in units of a power of two keep every neighbour: identical predictions.
    from ndis.auditor.eureka import _knn_predict

    X_p, X_q = _pair(2_000)
    train, labels = np.concatenate([X_p[:1_500], X_q[:1_500]]), np.repeat([1, 0], 1_500)
    query = np.concatenate([X_p[1_500:], X_q[1_500:]])
    reference = _knn_predict(train, labels, query, 55)
    assert 0.6 < np.mean(reference == np.repeat([1, 0], 500)) < 0.9  # a classifier better than chance
    np.testing.assert_array_equal(_knn_predict(train * 1e160, labels, query * 1e160, 55), reference)


class OverflowingScorer(NaNScorer):
    """log-odds that overflowed to +inf everywhere: every row of M(D') called impossible under M(D')."""

    name = "overflowing"

    def log_odds(self, X):
        return np.full(len(X), np.inf)


def test_infinite_log_odds_for_rows_of_the_wrong_side_are_an_error():
    # Consistent infinities (+inf only where M(D') cannot go) are valid log-odds; +inf on a row that
    # M(D') produced is not, and all-infinite scores would otherwise give a zero curve.
    with pytest.raises(ValueError, match=r"'overflowing/flatten' returned log-odds -inf for 0 .* \+inf for [\d,]+ "
                                         r"drawn from M\(D'\)"):
        audit(_gaussian(1.0), 0.0, 1.0, eps=EPS, n_samples=4_000, seed=0, scorer=OverflowingScorer(), progress=False)
