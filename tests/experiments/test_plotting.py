"""experiments.plotting: spectra plots whose titles carry user strings (data paths, plug-in names)."""

import numpy as np

from ndis.experiments.plotting import plot_curves


def test_a_title_with_dollar_signs_is_drawn_as_it_is(tmp_path):
    # `ndis theory` titles its plot with the data path; `$\bad$` was parsed as mathtext and the PNG failed.
    eps = np.linspace(0, 1, 5)
    path = plot_curves(tmp_path / "spectrum.png", eps, {"max": np.exp(-eps), "forward": np.exp(-2 * eps)},
                       r"rp on data/cost$_{5}$ $\bad$.csv", scale="both")
    assert path.read_bytes()[:4] == b"\x89PNG"
