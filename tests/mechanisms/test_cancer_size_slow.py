"""Slow validation: fast and literal samplers agree at the papers' Cancer size (county CSV from
$NDIS_CANCER_PATH, p = 12, r = 300), where the literal sketch is a 300 x 3047 Gaussian matrix per output.
Run with `python -m pytest -m slow tests/mechanisms`."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis.experiments.datasets import cancer

from .checks import same_distribution


@pytest.mark.slow
@pytest.mark.parametrize("name", ["als", "rp", "m-als"])
def test_fast_matches_literal_on_cancer(name, cancer_csv):
    D = cancer(cancer_csv)
    mech = mechanisms.get(name, r=300, **({} if name in ("als", "rp") else dict(eps=1.0, delta=1.0 / len(D))))
    literal = mech.sample_literal(D, 1500, np.random.default_rng(1))
    fast = mech.sample(D, 20_000, np.random.default_rng(2))
    assert same_distribution(mech.features(literal), mech.features(fast)) == []
