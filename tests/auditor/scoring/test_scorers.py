import numpy as np
import pytest
from scipy.special import log_expit
from scipy.stats import multivariate_normal

from ndis.auditor import audit
from ndis.auditor.scoring import features, scorers, selection

MEAN_P, VAR_P = np.array([0.5, 0.0]), np.array([1.0, 2.25])


def _pair(rng, n):
    return rng.normal(size=(n, 2)) * np.sqrt(VAR_P) + MEAN_P, rng.normal(size=(n, 2))


def _bayes_log_loss(X_p, X_q):
    def llr(X):
        return multivariate_normal.logpdf(X, MEAN_P, np.diag(VAR_P)) - multivariate_normal.logpdf(X, np.zeros(2), np.eye(2))

    return -(np.mean(log_expit(llr(X_p))) + np.mean(log_expit(-llr(X_q)))) / 2


@pytest.mark.parametrize("name, slack", [("quadratic", 0.001), ("gaussian", 0.001), ("knn", 0.01), ("boosting", 0.01),
                                         ("mlp", 0.01)])
def test_scorers_approach_the_bayes_log_loss_on_a_gaussian_pair(name, slack):
    # Mean and covariance shift in 2-D. On the same 20,000 + 20,000 validation points, a scorer's log-loss
    # is >= the Bayes log-loss up to sampling noise of the paired difference (~1e-3 here), and a good
    # scorer is within `slack` of it: the quadratic model contains the exact log-likelihood ratio, and the
    # Gaussian plug-in is it with estimated moments; the others estimate it non-parametrically from 30,000
    # points per side.
    rng = np.random.default_rng(0)
    fit_p, fit_q = _pair(rng, 30_000)
    val_p, val_q = _pair(rng, 20_000)
    scorer = scorers.make(name).fit(fit_p, fit_q, seed=1)
    bayes = _bayes_log_loss(val_p, val_q)
    loss = selection.log_loss(scorer, val_p, val_q)
    assert bayes - 0.002 <= loss <= bayes + slack
    assert scorer.log_odds(val_p[:7]).shape == (7,)


@pytest.mark.parametrize("k", [3, 1])  # one feature: Horner's rule instead of the matrix products
def test_quadratic_log_odds_are_the_logistic_models_decision_function(k):
    # log_odds evaluates the fit as a quadratic form in the whitened features; it must equal the
    # logistic regression's own decision function on the expanded, standardised features (to rounding).
    from ndis.auditor.scoring.preprocessing import Standardiser, training_set

    rng = np.random.default_rng(4)
    mix = rng.normal(size=(k, k))
    X_p, X_q = rng.normal(0.2, 1.1, (5_000, k)) @ mix, rng.normal(size=(5_000, k)) @ mix
    scorer = scorers.QuadraticScorer().fit(X_p, X_q)
    rows, cols = np.triu_indices(k)
    Z = scorer._inner(training_set(X_p, X_q, scorer.max_fit)[0])
    E = np.concatenate([Z, Z[:, rows] * Z[:, cols]], axis=1)
    np.testing.assert_array_equal(scorer._expand(training_set(X_p, X_q, scorer.max_fit)[0]), E)
    Z_new = scorer._inner(X_p[:500])
    expected = scorer.model.decision_function(Standardiser().fit(E)(np.concatenate([Z_new, Z_new[:, rows] * Z_new[:, cols]], axis=1)))
    np.testing.assert_allclose(scorer.log_odds(X_p[:500]), expected, rtol=0, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("k", [3, 1])
def test_gaussian_log_odds_are_the_difference_of_the_fitted_normal_log_densities(k):
    # QDA's discriminant: log N(x; m_P, S_P) - log N(x; m_Q, S_Q) with each side's sample mean and
    # covariance (np.cov), whatever the units of the outputs (here 1e150: squares beyond float64 without
    # the whitening's power-of-two units); to rounding.
    rng = np.random.default_rng(5)
    mix = rng.normal(size=(k, k))
    X_p, X_q = rng.normal(0.2, 1.1, (4_000, k)) @ mix * 1e150, rng.normal(size=(4_000, k)) @ mix * 1e150
    scorer = scorers.make("gaussian").fit(X_p, X_q)
    rows = X_p[:300] / 1e150
    expected = (multivariate_normal.logpdf(rows, X_p.mean(axis=0) / 1e150, np.cov(X_p / 1e150, rowvar=False))
                - multivariate_normal.logpdf(rows, X_q.mean(axis=0) / 1e150, np.cov(X_q / 1e150, rowvar=False)))
    np.testing.assert_allclose(scorer.log_odds(X_p[:300]), expected, rtol=1e-9, atol=1e-9)


def test_gaussian_scorer_refuses_a_singular_covariance():
    rng = np.random.default_rng(6)
    X_p = rng.normal(size=(1_000, 1)) * [1.0, 2.0]  # both columns the same up to scale
    with pytest.raises(ValueError, match=r"that of M\(D\) is singular"):
        scorers.make("gaussian").fit(X_p, rng.normal(size=(1_000, 2)))


def test_mlp_is_reproducible_for_a_seed():
    rng = np.random.default_rng(0)
    fit_p, fit_q = _pair(rng, 5_000)
    a = scorers.make("mlp", epochs=2).fit(fit_p, fit_q, seed=3).log_odds(fit_p[:100])
    b = scorers.make("mlp", epochs=2).fit(fit_p, fit_q, seed=3).log_odds(fit_p[:100])
    np.testing.assert_array_equal(a, b)


def test_auto_picks_the_least_validation_log_loss():
    def mech(data, n, rng):  # Laplace noise: not Gaussian, so every candidate is trained
        return rng.laplace(size=(n, 2)) * np.sqrt(VAR_P) + MEAN_P * data

    report = audit(mech, 1.0, 0.0, eps=np.linspace(0, 1, 5), n_samples=8_000, seed=0, scorer="auto")
    losses = report.info["validation_log_loss"]
    assert set(losses) == {"quadratic/flatten", "boosting/flatten", "mlp/flatten", "density/flatten",
                           "segments/flatten", "spline/flatten"}
    # 2-D continuous outputs of 6,000 training rows: the density scorer's cells would hold too few rows,
    # and the segments scorer takes at most one continuous coordinate
    assert losses.pop("density/flatten").startswith("skipped: the density scorer does not apply")
    assert losses.pop("segments/flatten").startswith("skipped: the segments scorer does not apply")
    assert report.scorer == min(losses, key=losses.get)


def test_quadratic_scorer_refuses_too_many_terms():
    with pytest.raises(ValueError, match="max_terms"):
        scorers.QuadraticScorer(max_terms=10).fit(np.zeros((20, 5)), np.ones((20, 5)))


def test_gram_features_are_the_upper_triangle_of_z_transpose_z():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(4, 3, 2))
    G = features.gram(Z)
    for i in range(4):
        full = Z[i].T @ Z[i]
        np.testing.assert_allclose(G[i], [full[0, 0], full[0, 1], full[1, 1]])
    assert features.flatten(Z).shape == (4, 6)


def test_feature_resolution():
    class WithFeatures:
        def features(self, samples):
            return samples[:, :1]

    name, fmap = features.resolve("auto", WithFeatures())
    assert name == "mechanism" and fmap(np.ones((3, 2))).shape == (3, 1)
    assert features.resolve("auto", object())[0] == "flatten"
    with pytest.raises(ValueError, match="allowed"):
        features.resolve("pca")
    _, bad = features.resolve(lambda s: np.full((len(s), 1), np.inf))
    with pytest.raises(ValueError, match="NaN or infinite"):
        bad(np.ones((2, 2)))


def test_torch_device_selection():
    from ndis.auditor.scoring.mlp import select_device

    assert select_device("auto") in ("cpu", "cuda", "mps")
    assert select_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="torch device"):
        select_device("tpu")


class LinearLogOdds:
    """A user-defined scorer: Fisher's linear discriminant with the pooled covariance, which is the exact
    log-likelihood ratio of two Gaussians with equal covariances."""

    name = "linear"

    def fit(self, X_p, X_q, seed=0):
        m_p, m_q = X_p.mean(axis=0), X_q.mean(axis=0)
        pooled = np.atleast_2d(np.cov(np.concatenate([X_p - m_p, X_q - m_q]), rowvar=False))
        self.w = np.linalg.solve(pooled, m_p - m_q)
        self.b = -self.w @ (m_p + m_q) / 2
        return self

    def log_odds(self, X):
        return np.asarray(X) @ self.w + self.b


def _shift(data, n, rng):
    return data + rng.standard_normal((n, 1))


def test_a_user_scorer_object_satisfies_the_protocol_and_audits():
    # N(1, 1) vs N(0, 1): 2e4 held-out per side, SE of delta-hat <= sqrt((1 + e^2) / 4 / 2e4) = 0.010
    # at eps <= 1; 0.04 is 4 SE.
    from ndis.auditor import Scorer

    from ..conftest import gaussian_delta_reference

    assert isinstance(LinearLogOdds(), Scorer) and not isinstance(object(), Scorer)
    eps = np.linspace(0, 1, 11)
    report = audit(_shift, 1.0, 0.0, eps=eps, n_samples=40_000, seed=0, scorer=LinearLogOdds())
    truth = gaussian_delta_reference(eps, 1.0)
    assert report.scorer == "linear/flatten"
    assert np.max(np.abs(report.delta - truth)) < 0.04 and np.all(report.delta_lower <= truth)


def test_a_registered_scorer_is_used_by_name():
    scorers.register("test-linear", LinearLogOdds, replace=True)
    assert "test-linear" in scorers.names() and isinstance(scorers.make("test-linear"), LinearLogOdds)
    with pytest.raises(ValueError, match="already registered"):
        scorers.register("test-linear", LinearLogOdds)
    eps = np.linspace(0, 1, 5)
    by_name = audit(_shift, 1.0, 0.0, eps=eps, n_samples=4_000, seed=3, scorer="test-linear")
    by_object = audit(_shift, 1.0, 0.0, eps=eps, n_samples=4_000, seed=3, scorer=LinearLogOdds())
    assert by_name.scorer == "test-linear/flatten"
    np.testing.assert_array_equal(by_name.delta, by_object.delta)
    np.testing.assert_array_equal(by_name.delta_lower, by_object.delta_lower)
