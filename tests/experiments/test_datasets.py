"""Dataset loaders: shapes, the papers' preprocessing, and clear errors."""

import numpy as np
import pytest

from ndis.experiments import datasets

CANCER = "/work/shared/data/cancer_reg.csv"


def test_flights_matches_the_papers_flight_set():
    D = datasets.flights()
    assert D.shape == (327_346, 3)                        # rows with dep_delay and arr_delay (the papers' Flight set)
    np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1.0, rtol=1e-10)   # summation error over 3e5 rows
    assert np.linalg.norm(D, axis=1).max() == pytest.approx(0.0732081, abs=5e-8)   # the row-norm bound C of the Flight experiments
    assert datasets.flights(rows=20_000).shape == (20_000, 3)


def test_cancer_table_has_twelve_columns_of_B_and_a_label():
    D = datasets.cancer(CANCER)
    assert D.shape == (3047, 13)
    np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1.0, rtol=1e-12)
    assert np.unique(D[:, -2]).size == 1                  # the constant column


def test_song_format_on_a_small_synthetic_file(tmp_path):
    rng = np.random.default_rng(0)
    years = rng.integers(1950, 2011, 50)
    features = rng.standard_normal((50, 90))
    path = tmp_path / "YearPredictionMSD.txt"
    np.savetxt(path, np.column_stack([years, features]), delimiter=",", fmt="%.6f")
    D = datasets.song(path)
    assert D.shape == (50, 92)                            # 90 features + constant + year
    np.testing.assert_allclose(D[:, -1] * np.linalg.norm(years), years, rtol=1e-9)


def test_load_by_name_and_csv(tmp_path):
    assert datasets.load("synthetic:n=50,d=4,seed=2").shape == (50, 5)
    assert datasets.load("flights:100").shape == (100, 3)
    path = tmp_path / "m.csv"
    np.savetxt(path, np.arange(12.0).reshape(4, 3), delimiter=",", header="a,b,c", comments="")
    np.testing.assert_array_equal(datasets.load(str(path)), np.arange(12.0).reshape(4, 3))


@pytest.mark.parametrize("spec,message", [("nope", "unknown dataset"), ("cancer:/no/such.csv", "not found"),
                                          ("synthetic:q=1", "unknown synthetic option"), ("flights:2", "at least 3")])
def test_load_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        datasets.load(spec)
