"""as_data validates a dataset once; memo keeps derived quantities with it."""

import gc

import numpy as np
import pytest

from ndis.core import validation


def test_as_data_returns_a_read_only_view_that_is_not_checked_again(monkeypatch):
    raw = np.arange(12.0).reshape(4, 3)
    D = validation.as_data(raw)
    assert np.shares_memory(D, raw) and not D.flags.writeable and raw.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        D[0, 0] = 1.0
    scans = []
    monkeypatch.setattr(validation.np, "isfinite", lambda a: scans.append(a.shape) or np.ones(a.shape, bool))
    assert validation.as_data(D) is D and validation.as_data(D, min_cols=2) is D
    assert validation.as_finite_array(D, "D") is D
    assert scans == []
    validation.as_data(raw)                  # the caller's own array is checked again
    assert scans == [(4, 3)]


def test_as_data_on_a_validated_view_still_checks_the_shape():
    D = validation.as_data(np.ones((3, 1)))
    with pytest.raises(ValueError, match="at least 1 row and 2 column"):
        validation.as_data(D, min_cols=2)
    with pytest.raises(ValueError, match="NaN"):
        validation.as_data(np.array([[1.0, np.nan]]))


def test_memo_computes_once_per_validated_dataset_and_is_freed_with_it():
    calls = []
    compute = lambda D: calls.append(1) or D.sum()
    D = validation.as_data(np.ones((5, 2)))
    assert validation.memo(D, "sum", compute) == validation.memo(D, "sum", compute) == 10.0
    assert len(calls) == 1
    validation.memo(np.ones((5, 2)), "sum", compute)      # not validated: computed, not kept
    assert len(calls) == 2
    gc.collect()  # datasets of earlier tests left in reference cycles go first
    count = len(validation._VALIDATED)
    del D
    gc.collect()
    assert len(validation._VALIDATED) == count - 1


@pytest.mark.parametrize("eps", [-1.5, 0.0, [-2.0, 0.0, 3.0]])
def test_eps_may_be_negative_but_must_be_finite(eps):
    np.testing.assert_array_equal(validation.as_eps(eps), eps)
    assert validation.as_eps_grid(eps).ndim == 1
    with pytest.raises(ValueError, match="eps contains NaN"):
        validation.as_eps([0.0, np.inf])


@pytest.mark.parametrize("check", [lambda v: validation.as_data(v), lambda v: validation.as_finite_array(v, "D"),
                                   lambda v: validation.as_eps_grid(np.ravel(v))])
@pytest.mark.parametrize("value", [np.array([[1 + 2j, 3.0]]), [[1 + 2j, 3.0]], np.array([[1 + 0j, 3.0]])])
def test_complex_values_are_refused_not_cut_to_their_real_part(check, value):
    # Before, numpy's cast dropped the imaginary part with only a ComplexWarning (as_data, as_finite_array).
    with pytest.raises(TypeError, match="complex.*real part and imaginary part as separate"):
        check(value)


def test_one_setting_names_the_clash_and_the_missing_ways():
    ways = (("sigma",), ("eps", "delta"))
    validation.one_setting("m", {"sigma": 1.0, "eps": None, "delta": None}, *ways)
    validation.one_setting("m", {"sigma": None, "eps": 1.0, "delta": 0.1}, *ways)
    with pytest.raises(ValueError, match=r"m takes sigma, or eps and delta, only one of them: got sigma=1.0, "
                                         r"delta=0.1 \(sigma would silently override the rest\)"):
        validation.one_setting("m", {"sigma": 1.0, "eps": None, "delta": 0.1}, *ways)
    with pytest.raises(ValueError, match="m needs sigma, or eps and delta$"):
        validation.one_setting("m", {"sigma": None, "eps": 1.0, "delta": None}, *ways)
    with pytest.raises(ValueError, match="got sigma=1.0, C=2"):
        validation.one_setting("m", {"sigma": 1.0, "C": 2}, *ways, optional_with={"C": 1})
    validation.one_setting("m", {"sigma": 1.0, "eps": None, "delta": 0.1}, *ways, shared=("delta",))
