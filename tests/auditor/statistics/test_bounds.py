import numpy as np
import pytest

from ndis.auditor.statistics import bounds


def test_clopper_pearson_edge_cases_have_closed_forms():
    # k = 0: the upper bound solves (1 - p)^n = level; k = n: the lower bound solves p^n = level.
    assert bounds.clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-10)
    assert bounds.clopper_pearson_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100), rel=1e-10)
    assert bounds.clopper_pearson_lower(0, 100, 0.05) == 0.0
    assert bounds.clopper_pearson_upper(100, 100, 0.05) == 1.0


def test_clopper_pearson_brackets_the_proportion_and_tightens_with_n():
    k = np.array([1, 10, 50])
    low, up = bounds.clopper_pearson_lower(k, 100, 0.01), bounds.clopper_pearson_upper(k, 100, 0.01)
    assert np.all(low < k / 100) and np.all(k / 100 < up)
    wide = bounds.clopper_pearson_upper(10, 100, 0.01) - bounds.clopper_pearson_lower(10, 100, 0.01)
    narrow = bounds.clopper_pearson_upper(1000, 10000, 0.01) - bounds.clopper_pearson_lower(1000, 10000, 0.01)
    assert narrow < wide / 5


def test_clopper_pearson_coverage_is_at_least_nominal():
    # 20,000 binomial draws; the miss rate must not exceed 5% by more than 4 standard errors (0.6%).
    rng = np.random.default_rng(1)
    n, p = 200, 0.07
    k = rng.binomial(n, p, size=20_000)
    miss = np.mean(bounds.clopper_pearson_lower(k, n, 0.05) > p)
    assert miss <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / 20_000)


def test_dkw_radius_formula_and_level_check():
    assert bounds.dkw_radius(1000, 0.05) == pytest.approx(np.sqrt(np.log(20) / 2000))
    with pytest.raises(ValueError):
        bounds.dkw_radius(1000, 0.7)


def test_detectable_floor_is_the_smallest_certifiable_count():
    eps, n, level = np.array([0.0, 1.0]), 10_000, 0.001
    floor = bounds.detectable_floor(eps, n, n, level)
    for e, f in zip(eps, floor):
        k = round(f * n)
        target = np.exp(e) * bounds.clopper_pearson_upper(0, n, level)
        assert bounds.clopper_pearson_lower(k, n, level) > target
        assert bounds.clopper_pearson_lower(k - 1, n, level) <= target
    assert floor[1] > floor[0]
    assert bounds.detectable_floor([5.0], 10, 10, 0.001)[0] == 1.0  # nothing certifiable


def test_levels_outside_unit_interval_are_rejected():
    with pytest.raises(ValueError, match="level"):
        bounds.clopper_pearson_lower(1, 10, 1.5)


def test_special_function_quantiles_are_scipy_stats_bit_for_bit():
    """bounds computes Beta and normal quantiles with scipy.special (scipy.stats costs seconds to
    import); scipy.stats.beta.ppf / isf and norm.isf call the same functions, so the values agree exactly."""
    from scipy import stats

    rng = np.random.default_rng(0)
    n = rng.integers(1, 10**7, 200).astype(float)
    k = np.floor(rng.random(200) * (n + 1))
    level = np.concatenate([[1e-12, 0.025, 0.05, 0.5, 0.975], rng.random(195)])
    np.testing.assert_array_equal(bounds.clopper_pearson_lower(k, n, level),
                                  np.where(k <= 0, 0.0, stats.beta.ppf(level, np.maximum(k, 1.0), n - k + 1.0)))
    np.testing.assert_array_equal(bounds.clopper_pearson_upper(k, n, level),
                                  np.where(k >= n, 1.0, stats.beta.isf(level, k + 1.0, np.maximum(n - k, 1.0))))
    np.testing.assert_array_equal(bounds.normal_isf(level), stats.norm.isf(level))


def test_wilson_bounds_are_the_closed_form_bit_for_bit():
    """`wilson_lower` computes in place, operation by operation; it equals the closed form
    clip((p + z^2/2n) / (1 + z^2/n) - z / (1 + z^2/n) sqrt(p (1 - p) / n + z^2/4n^2), 0, 1) exactly,
    for arrays, scalars (a numpy float back) and n broadcast against p."""
    def closed_form(p, n, z):
        p, n = np.asarray(p, dtype=float), np.asarray(n, dtype=float)
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
        return np.clip(centre - half, 0.0, 1.0)

    rng = np.random.default_rng(7)
    p = np.concatenate([rng.random(10_000), [0.0, 1.0, 1e-300, 1 - 1e-16]])
    for n, z in ((1, 0.5), (12_345, 2.0), (3e15, 4.3)):
        assert np.array_equal(bounds.wilson_lower(p, n, z), closed_form(p, n, z))
        assert np.array_equal(bounds.wilson_upper(p, n, z), 1.0 - closed_form(1.0 - p, n, z))
        scalar = bounds.wilson_lower(0.3, n, z)
        assert isinstance(scalar, np.floating) and scalar == closed_form(0.3, n, z)
    column, sizes = rng.random((3, 1)), rng.integers(1, 1_000, 5).astype(float)
    assert np.array_equal(bounds.wilson_lower(column, sizes, 2.0), closed_form(column, sizes, 2.0))
