import numpy as np
import pytest

from ndis.auditor import audit
from ndis.auditor.scoring import scorers, selection


class Shifted:
    """log-odds = slope * (x - 1/2) for P = N(1, 1) against Q = N(0, 1); slope 1 is the exact log-ratio."""

    def __init__(self, slope):
        self.slope = slope

    def log_odds(self, X):
        return self.slope * (X[:, 0] - 0.5)


def _valid(n=4_000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(1, 1, (n, 1)), rng.normal(0, 1, (n, 1))


def _run(slopes, n_fit):
    X = _valid()
    calls = []

    def fit(label, rows):
        calls.append((label, rows))
        return Shifted(slopes[label])

    settled = []
    result = selection.successive_halving(list(slopes), fit, {label: X for label in slopes}, n_fit, settled.append)
    return result, calls, sum(settled)


def test_loss_gap_is_the_difference_of_balanced_losses_with_its_standard_error():
    rng = np.random.default_rng(1)
    a = (rng.random(500), rng.random(400))
    b = (rng.random(500), rng.random(400))
    gap, se = selection.loss_gap(a, b)
    assert gap == pytest.approx((a[0].mean() + a[1].mean()) / 2 - (b[0].mean() + b[1].mean()) / 2)
    d_p, d_q = a[0] - b[0], a[1] - b[1]
    assert se == pytest.approx(np.sqrt(np.var(d_p, ddof=1) / 500 + np.var(d_q, ddof=1) / 400) / 2)


def test_a_clear_loser_is_dropped_after_the_small_rung_and_never_fitted_on_all_rows():
    (label, scorer, losses, rounds), calls, settled = _run({"good": 1.0, "bad": 0.1}, n_fit=80_000)
    assert label == "good" and scorer.slope == 1.0
    assert calls == [("good", 10_000), ("bad", 10_000), ("good", 80_000)]
    assert list(rounds[0]["dropped"]) == ["bad"] and rounds[1]["dropped"] == {}
    assert settled == 2 and losses["bad"] > losses["good"]


def test_close_candidates_all_reach_the_last_rung():
    (label, _, losses, rounds), calls, _ = _run({"a": 1.0, "b": 0.99}, n_fit=80_000)
    assert rounds[0]["dropped"] == {} and label in ("a", "b")
    assert [c for c in calls if c[1] == 80_000] == [("a", 80_000), ("b", 80_000)]


def test_small_fit_sets_and_single_candidates_are_fitted_on_all_rows_at_once():
    (label, _, _, rounds), calls, _ = _run({"good": 1.0, "bad": 0.1}, n_fit=8 * selection.MIN_ROWS - 8)
    assert label == "good" and len(rounds) == 1 and {rows for _, rows in calls} == {8 * selection.MIN_ROWS - 8}
    (_, _, _, rounds), calls, _ = _run({"only": 1.0}, n_fit=80_000)
    assert calls == [("only", 80_000)]


def test_a_candidate_that_cannot_be_fitted_is_skipped():
    X = _valid()

    def fit(label, rows):
        if label == "broken":
            raise ValueError("too many terms")
        return Shifted(1.0)

    label, _, losses, _ = selection.successive_halving(["broken", "fine"], fit, {"broken": X, "fine": X}, 80_000,
                                                       lambda k: None)
    assert label == "fine" and losses["broken"] == "skipped: too many terms"


def test_auto_keeps_the_full_comparison_choice(monkeypatch):
    def mech(data, n, rng):  # Laplace noise: not Gaussian, so halving runs over every candidate
        return rng.laplace(size=(n, 2)) + np.array([0.4, -0.2]) * data

    kwargs = dict(eps=np.linspace(0, 1, 5), n_samples=48_000, seed=0, scorer="auto", progress=False)
    halving = audit(mech, 1.0, 0.0, **kwargs)
    monkeypatch.setattr(selection, "RUNGS", (1.0,))
    full = audit(mech, 1.0, 0.0, **kwargs)
    rounds = halving.info["scorer_selection"]
    assert [r["fit_rows_per_side"] for r in rounds] == [2_250, 18_000]
    assert len(full.info["scorer_selection"]) == 1
    full_losses = full.info["validation_log_loss"]
    assert len(full_losses) == len(scorers.AUTO_CANDIDATES)
    fitted = {label: loss for label, loss in full_losses.items() if not isinstance(loss, str)}
    assert set(full.info["scorer_selection"][0]["losses"]) == set(fitted)
    assert full_losses["segments/flatten"].startswith("skipped")  # two continuous coordinates
    chosen = halving.scorer
    assert full_losses[chosen] <= min(fitted.values()) + 0.01
    if chosen == full.scorer:
        np.testing.assert_array_equal(halving.delta, full.delta)
        np.testing.assert_array_equal(halving.delta_lower, full.delta_lower)


def test_auto_on_gaussian_outputs_trains_only_the_gaussian_plug_in_and_audits_as_it_does():
    def mech(data, n, rng):
        return rng.normal(size=(n, 2)) @ np.array([[1.0, 0.3], [0.0, 0.8]]) + np.array([0.4, -0.2]) * data

    kwargs = dict(eps=np.linspace(0, 1, 5), n_samples=48_000, seed=0, progress=False)
    auto = audit(mech, 1.0, 0.0, scorer="auto", **kwargs)
    gaussian = audit(mech, 1.0, 0.0, scorer="gaussian", **kwargs)
    quadratic = audit(mech, 1.0, 0.0, scorer="quadratic", **kwargs)
    losses = auto.info["validation_log_loss"]
    assert auto.scorer == "gaussian/flatten"
    assert losses["mlp/flatten"].startswith("skipped: both sides pass Mardia's normality tests")
    assert losses["boosting/flatten"].startswith("skipped: both sides pass Mardia's normality tests")
    assert losses["quadratic/flatten"].endswith("holds the exact log-likelihood ratio, fitted instead")
    assert [list(r["losses"]) for r in auto.info["scorer_selection"]] == [["gaussian/flatten"]]
    np.testing.assert_array_equal(auto.delta, gaussian.delta)
    np.testing.assert_array_equal(auto.delta_lower, gaussian.delta_lower)
    # the plug-in and the logistic fit estimate the same log-ratio: the validation losses agree far within
    # the loss's sampling error on 12,000 rows per side (about 0.005 nats), and so do the estimates
    assert losses["gaussian/flatten"] == pytest.approx(quadratic.info["validation_log_loss"]["quadratic/flatten"],
                                                       abs=1e-3)
    np.testing.assert_allclose(auto.delta, quadratic.delta, atol=0.01)


def test_mardia_tests_accept_gaussian_rows_and_reject_other_laws():
    rng = np.random.default_rng(0)
    # Under normality each test's p-value is uniform and the smaller of the two has mean 1/3 and standard
    # deviation 0.24, so the mean of 40 lies within 0.12 (3.2 standard errors) of 1/3; a wrong null law
    # (degrees of freedom, variance) moves it far off. This seed's smallest of the 40 is 0.02.
    p_gaussian = [selection.gaussian_pvalue(rng.normal(size=(20_000, k)) @ rng.normal(size=(k, k)))
                  for k in (1, 2, 5, 12) for _ in range(10)]
    assert min(p_gaussian) > 0.01 and np.mean(p_gaussian) == pytest.approx(1 / 3, abs=0.12)
    heavy = rng.normal(size=(20_000, 12)) / np.sqrt(rng.chisquare(50, size=(20_000, 1)) / 50)  # multivariate t, 50 df
    assert selection.gaussian_pvalue(heavy) < 1e-6
    assert selection.gaussian_pvalue(rng.laplace(size=(20_000, 2))) < 1e-6
    assert selection.gaussian_pvalue(rng.uniform(size=(20_000, 2))) < 1e-6
    assert selection.gaussian_pvalue(np.round(10 * rng.normal(size=(20_000, 2)))) == 0  # repeated values
    assert selection.gaussian_pvalue(rng.normal(size=(20_000, 2)).astype(np.float32)) > 0.01  # a few ties only
    assert selection.gaussian_pvalue(rng.normal(size=(20_000, 1)) * [1.0, 2.0]) == 0  # singular covariance


def test_gaussian_skips_need_the_quadratic_on_the_same_features():
    rng = np.random.default_rng(1)
    gaussian = (rng.normal(size=(5_000, 2)), rng.normal(0.2, 1, (5_000, 2)))
    laplace = (rng.laplace(size=(5_000, 2)), rng.laplace(0.2, 1, (5_000, 2)))
    X = {"quadratic/a": gaussian, "mlp/a": gaussian, "quadratic/b": laplace, "mlp/b": laplace, "mlp/c": gaussian}
    quadratic_of = {label: "quadratic/" + label.split("/")[1] for label in X}
    skips, added = selection.gaussian_skips(list(X), X, quadratic_of)
    assert list(skips) == ["mlp/a"] and added == []  # not mlp/b (Laplace) nor mlp/c (no quadratic on its features)
    # with plug-ins, a passing quadratic is replaced by its own; a lone quadratic (scorer="quadratic") is kept
    skips, added = selection.gaussian_skips(list(X), X, quadratic_of, {"quadratic/a": "gaussian/a"})
    assert list(skips) == ["mlp/a", "quadratic/a"] and added == ["gaussian/a"]
    alone = {"quadratic/a": gaussian}
    assert selection.gaussian_skips(list(alone), alone, {"quadratic/a": "quadratic/a"},
                                    {"quadratic/a": "gaussian/a"}) == ({}, [])


def test_a_pair_of_gaussian_sides_passes_at_the_family_wise_level():
    # Bonferroni over the four tests: on Gaussian rows the adjusted p-value falls below GAUSS_LEVEL = 0.001
    # in at most 0.1% of pairs, so none of 30 seeded pairs may (P(any) <= 3%); a Laplace pair always does.
    rng = np.random.default_rng(2)
    pairs = [(rng.normal(size=(20_000, 2)), rng.normal(0.3, 1.2, (20_000, 2))) for _ in range(30)]
    assert min(selection.gaussian_pvalue_of_pair(*pair) for pair in pairs) >= selection.GAUSS_LEVEL
    assert selection.gaussian_pvalue_of_pair(rng.laplace(size=(20_000, 2)), rng.normal(size=(20_000, 2))) == 0


def test_the_mlp_trains_exactly_as_with_torch_adam_without_importing_dynamo(monkeypatch):
    torch = pytest.importorskip("torch")
    from ndis.auditor.scoring import mlp, scorers

    rng = np.random.default_rng(0)
    X_p, X_q = rng.normal(0.3, 1, (3_000, 2)), rng.normal(0, 1, (3_000, 2))
    own = scorers.make("mlp", epochs=3).fit(X_p, X_q, seed=2).log_odds(X_p[:200])
    monkeypatch.setattr(mlp, "_Adam", lambda params, lr: torch.optim.Adam(params, lr=lr))
    reference = scorers.make("mlp", epochs=3).fit(X_p, X_q, seed=2).log_odds(X_p[:200])
    np.testing.assert_array_equal(own, reference)


def test_an_auto_audit_of_gaussian_outputs_imports_neither_torch_nor_sklearn(tmp_path):
    # torch and scikit-learn cost seconds to import; they must load only when an MLP or a logistic or boosting
    # model trains (run in a fresh interpreter).
    import subprocess
    import sys

    code = ("import sys\nimport numpy as np\nfrom ndis.auditor import audit\n"
            "mech = lambda data, n, rng: rng.normal(size=(n, 2)) + np.array([0.4, -0.2]) * data\n"
            "report = audit(mech, 1.0, 0.0, eps=[0, 0.5], n_samples=48_000, seed=0, progress=False)\n"
            "print(report.scorer, 'torch' in sys.modules or 'sklearn' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert result.stdout.split() == ["gaussian/flatten", "False"]
