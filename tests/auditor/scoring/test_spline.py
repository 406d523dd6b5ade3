"""The additive spline scorer (auditor.scoring.spline): its family holds the exact log-likelihood ratio of
independent per-coordinate noise, its atoms are fitted apart from the continuous part, its per-column
evaluation is the fitted model's, and it declines outputs too wide for its design."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from ndis import mechanisms
from ndis.auditor.scoring import scorers


def test_recovers_the_additive_log_ratio_of_the_laplace_mechanism():
    # Laplace noise on 3 coordinates: log p/q = sum_j (|x_j - q'_j| - |x_j - q_j|) / b, piecewise linear in
    # each coordinate. The fitted log-odds must follow it: residual RMS below a fifth of its spread (measured
    # 0.16; the boosting scorer gives 0.25, the quadratic 0.68).
    mech = mechanisms.get("zoo-laplace", eps0=0.5)
    D, D_prime = np.array([[0.0, 1.0, 2.0]]), np.array([[0.5, 1.25, 1.75]])  # L1 distance 1
    rng = np.random.default_rng(0)
    X_p, X_q = mech.sample(D, 100_000, rng), mech.sample(D_prime, 100_000, rng)
    scorer = scorers.make("spline").fit(X_p, X_q)
    X = np.vstack([mech.sample(D, 20_000, rng), mech.sample(D_prime, 20_000, rng)])
    truth, fitted = mech.log_ratio(X, D, D_prime), scorer.log_odds(X)
    assert np.sqrt(np.mean((fitted - truth) ** 2)) < 0.2 * truth.std()
    assert np.corrcoef(fitted, truth)[0, 1] > 0.98


def test_an_atom_is_fitted_apart_from_the_continuous_part():
    # Column: 0 with probability 0.3 (P) / 0.5 (Q), else N(0, 1) (P) / N(0.5, 1) (Q). The true log-odds are
    # log(0.3 / 0.5) at the atom and log(0.7 / 0.5) + log(phi(x) / phi(x - 0.5)) elsewhere; a spline tied to
    # the atom could not have both. Tolerance 0.05: the atom's log-odds has a standard error near 0.005
    # (60,000 and 100,000 atoms); the smooth part adds the spline's approximation error.
    rng = np.random.default_rng(1)
    n = 200_000

    def side(p_atom, mean):
        x = rng.normal(mean, 1.0, n)
        x[rng.random(n) < p_atom] = 0.0
        return x[:, None]

    scorer = scorers.make("spline").fit(side(0.3, 0.0), side(0.5, 0.5))
    x = np.array([0.0, -1.0, 0.25, 1.0])
    want = np.concatenate([[math.log(0.3 / 0.5)],
                           math.log(0.7 / 0.5) + stats.norm.logpdf(x[1:]) - stats.norm.logpdf(x[1:], 0.5)])
    np.testing.assert_allclose(scorer.log_odds(x[:, None]), want, atol=0.05)


def test_the_per_column_terms_compute_the_fitted_logistic_model():
    # log_odds evaluates b + sum_j f_j(x_j) column by column (piecewise polynomials and atom lookups); it
    # must be the fitted logistic regression on the design, up to rounding (1e-12 on log-odds of order 1),
    # on atoms, on a discrete column, and beyond the outermost knots, where f_j is constant; and survive
    # pickling (worker processes receive it).
    rng = np.random.default_rng(3)
    n = 50_000

    def side(shift):
        X = np.column_stack([rng.laplace(shift, 2.0, n), rng.normal(size=n), rng.integers(0, 4, n)])
        X[rng.random(n) < 0.2, 1] = 0.0
        return X

    scorer = scorers.make("spline").fit(side(0.0), side(1.0))
    X = side(0.5)
    X[:4, 0] = [-1e9, 1e9, -40.0, 40.0]
    want = scorer.model.decision_function(scorer._design(X))
    np.testing.assert_allclose(scorer.log_odds(X), want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(scorer)).log_odds(X), scorer.log_odds(X))
    beyond = np.repeat(X[4:5], 2, axis=0)
    beyond[:, 0] = [-1e9, -40.0]  # both below the first knot (the training minimum, about -20)
    assert np.ptp(scorer.log_odds(beyond)) == 0


def test_a_wide_design_fits_on_fewer_rows():
    # 20 continuous columns of 10 terms each: the design of 100,000 rows per side would take 320 MB; capped
    # at 2 x 10^6 entries (16 MB) it is built on 5,000 rows per side. The peak of numpy's traced allocations
    # then stays below 150 MB (the inputs and their stacked copy take 64 MB).
    import tracemalloc

    rng = np.random.default_rng(4)
    X_p, X_q = rng.normal(size=(100_000, 20)), rng.normal(0.1, 1.0, size=(100_000, 20))
    tracemalloc.start()
    scorer = scorers.make("spline", max_design=2_000_000).fit(X_p, X_q)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 150e6
    assert scorer.log_odds(X_p[:1000]).mean() > scorer.log_odds(X_q[:1000]).mean()


def test_declines_outputs_too_wide_for_its_design():
    rng = np.random.default_rng(2)
    X_p, X_q = rng.normal(size=(3_000, 300)), rng.normal(size=(3_000, 300))
    with pytest.raises(ValueError, match="max_terms"):
        scorers.make("spline").fit(X_p, X_q)
