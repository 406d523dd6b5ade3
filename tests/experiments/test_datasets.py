"""Dataset loaders: shapes, the papers' preprocessing, and clear errors."""

import numpy as np
import pandas as pd
import pytest

from ndis.experiments import datasets

def test_flights_matches_the_papers_flight_set():
    D = datasets.flights()
    assert D.shape == (327_346, 3)                        # rows with dep_delay and arr_delay (the papers' Flight set)
    np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1.0, rtol=1e-10)   # summation error over 3e5 rows
    assert np.linalg.norm(D, axis=1).max() == pytest.approx(0.0732081, abs=5e-8)   # the row-norm bound C of the Flight experiments
    assert datasets.flights(rows=20_000).shape == (20_000, 3)


def test_cancer_table_has_twelve_columns_of_B_and_a_label(cancer_csv):
    D = datasets.cancer(cancer_csv)
    assert D.shape == (3047, 13)
    np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1.0, rtol=1e-12)
    assert np.unique(D[:, -2]).size == 1                  # the constant column


def test_cancer_format_on_a_small_synthetic_file(tmp_path, monkeypatch):
    # the columns of the county table, the features of CANCER_FEATURES among others, a text column and a
    # missing value: the loader keeps the 11 features, adds the constant, drops the incomplete row
    rng = np.random.default_rng(1)
    columns = [*datasets.CANCER_FEATURES, datasets.CANCER_LABEL, "Geography", "PctSomeCol18_24"]
    table = pd.DataFrame(rng.uniform(1, 100, (20, len(columns))), columns=columns)
    table["Geography"] = "Some County, Somewhere"
    table.loc[3, "PctBlack"] = np.nan
    path = tmp_path / "cancer_reg.csv"
    table.to_csv(path, index=False)
    D = datasets.cancer(path)
    assert D.shape == (19, 13)
    np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(D[:, -1] * np.linalg.norm(table[datasets.CANCER_LABEL].drop(3)),
                               table[datasets.CANCER_LABEL].drop(3), rtol=1e-12)
    monkeypatch.setenv(datasets.CANCER_VARIABLE, str(path))
    np.testing.assert_array_equal(datasets.load("cancer"), D)   # `cancer` without a path reads $NDIS_CANCER_PATH
    monkeypatch.delenv(datasets.CANCER_VARIABLE)
    with pytest.raises(ValueError, match="NDIS_CANCER_PATH"):
        datasets.load("cancer")


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
