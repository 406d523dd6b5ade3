import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from ndis.auditor import Scoring, audit
from ndis.auditor.eureka import accuracy_to_delta, knn_k, knn_predict_1d, paper_radius

from .conftest import gaussian_delta_reference


@pytest.mark.parametrize("k", [1, 15, 101, 2999])
def test_one_dimensional_knn_matches_brute_force(k):
    rng = np.random.default_rng(k)
    x, y, query = rng.normal(size=3000), rng.integers(0, 2, 3000), 1.5 * rng.normal(size=2000)
    brute = KNeighborsClassifier(k, algorithm="brute").fit(x[:, None], y).predict(query[:, None])
    np.testing.assert_array_equal(knn_predict_1d(x, y, query, k), brute)


def test_paper_formulas():
    assert knn_k(10**6) == 10_001 and knn_k(99) == 101
    assert accuracy_to_delta(0.5, 0.0) == 0.0 and accuracy_to_delta(1.0, 2.0) == 1.0
    # the Eureka paper (Lu, Magdon-Ismail, Wei & Zikas 2024): at n1 = n2 = 1e7, d = 1, gamma = 0.01 the radius is 0.052 at eps = 0.01
    assert paper_radius(0.01, 10**7, 10**7, 1) == pytest.approx(0.052, abs=0.001)


def test_eureka_mode_estimates_the_gaussian_spectrum():
    # mu = 1, 1e5 test points per class: SE of the accuracy <= 0.0016, so of delta <= 2 e^eps 0.0016 <= 0.009
    # at eps <= 1; k-NN converges from below with a bias of a few 1e-3 at this size. 4 SE = 0.035.
    eps = np.linspace(0, 1, 6)
    report = audit(lambda data, n, rng: data + rng.standard_normal((n, 1)), 1.0, 0.0, eps=eps, n_samples=200_000,
                   seed=0, scorer=Scoring(method="eureka"))
    truth = gaussian_delta_reference(eps, 1.0)
    assert np.max(np.abs(report.delta - truth)) < 0.035
    assert np.all(report.delta_lower <= truth)
    assert report.scorer == "eureka-knn"
    with pytest.raises(ValueError, match="method='threshold'"):
        audit(lambda data, n, rng: data + rng.standard_normal((n, 1)), 1.0, 0.0, claimed=(1, 0.1),
              scorer=Scoring(method="eureka"))


def test_eureka_mode_with_the_mlp_classifier():
    # mu = 2: delta(0) = 0.68, delta(0.5) = 0.49. 1e4 test points per class: SE of delta <= 2 e^eps * 0.005
    # <= 0.017; an MLP from 2e4 points is close to Bayes in 1-D, so 0.08 (~4.7 SE) bounds the error.
    eps = np.array([0.0, 0.5])
    report = audit(lambda data, n, rng: data + rng.standard_normal((n, 1)), 2.0, 0.0, eps=eps, n_samples=20_000,
                   seed=0, scorer=Scoring(method="eureka", eureka={"classifier": "mlp"}))
    truth = gaussian_delta_reference(eps, 2.0)
    assert np.max(np.abs(report.delta - truth)) < 0.08
    assert np.all(report.delta_lower <= truth)
    assert report.scorer == "eureka-mlp"
