"""The grouped options of an audit (core.options) check their values when made: a mistake is one
line naming the field, before anything is imported or sampled, for the API and the command line alike."""

import math

import pytest

from ndis.auditor import Execution, Scoring, Split


@pytest.mark.parametrize("make, message", [
    (lambda: Split(train_fraction=1.0), r"train_fraction must lie in \(0, 1\), got 1.0"),
    (lambda: Split(validation_fraction=0), r"validation_fraction must lie in \(0, 1\), got 0"),
    (lambda: Split(screen_fraction=1.5), r"screen_fraction must lie in \[0, 1\], got 1.5"),
    (lambda: Split(max_train=0), "max_train must be an integer >= 1, got 0"),
    (lambda: Execution(n_jobs=0), r"n_jobs must be a positive number of workers or -1 \(all cores\), got 0"),
    (lambda: Execution(n_jobs=True), "n_jobs must be a positive number of workers"),
    (lambda: Execution(backend="spark"), "backend must be one of 'threads', 'loky', 'dask' or None, got 'spark'"),
    (lambda: Execution(chunk_size=-5), r"chunk_size must be None \(automatic\) or a positive integer, got -5"),
    (lambda: Execution(max_seconds=0), r"max_seconds must be a number > 0 \(math.inf: no limit\) or None, got 0"),
    (lambda: Execution(scheduler="tcp://127.0.0.1:8786"), "a scheduler goes with backend='dask'"),
    (lambda: Execution(backend="dask", scheduler="tcp://x:1", dashboard=True), "dashboard=True applies to the local"),
    (lambda: Scoring(method="knn"), "unknown method 'knn'; allowed: threshold, eureka"),
    (lambda: Scoring(eureka={"k": 3}), "eureka options go with method='eureka'"),
])
def test_each_option_is_checked_when_made(make, message):
    with pytest.raises(ValueError, match=message) as caught:
        make()
    assert "\n" not in str(caught.value)


def test_valid_options_keep_their_values():
    assert Split(max_train=10).training == (0.5, 10, 0.25)
    assert Execution(max_seconds=math.inf, backend="dask", dashboard=True).max_seconds == math.inf
    assert Scoring.of("quadratic") == Scoring(scorer="quadratic") and Scoring.of(Scoring("knn")).scorer == "knn"
