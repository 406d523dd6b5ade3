"""`ndis theory --compose/--with/--subsample/--delta/--renyi`: the composed curve written and reported is
the one `theory.compose` gives, and option mistakes are one line with exit code 2."""

import json

import numpy as np
import pytest

from ndis import theory
from ndis.cli import main
from ndis.experiments import datasets

DATA = "synthetic:n=120,d=3,seed=2"


def test_composition_options_write_the_composed_curve(tmp_path, capsys):
    pytest.importorskip("dp_accounting")
    code = main(["theory", "gaussian-ls", "--param", "sigma=0.5", "--data", DATA, "--eps", "0:3:7",
                 "--compose", "4", "--with", "gaussian:sigma=3", "--subsample", "0.3", "--delta", "1e-3,1e-6",
                 "--renyi", "--out", str(tmp_path)])
    assert code == 0
    spectrum = theory.spectrum("gaussian-ls", datasets.load(DATA), np.linspace(0, 3, 7), sigma=0.5)
    step = theory.poisson_subsample(theory.compose(spectrum, theory.GaussianPair([1 / 3], [[1.0]], [0.0], [[1.0]])), 0.3)
    expected = theory.compose(*[step] * 4)
    table = np.genfromtxt(tmp_path / "composed.csv", delimiter=",", names=True)
    assert np.allclose(table["delta"], expected.delta(np.linspace(0, 3, 7), "max"), rtol=1e-12, atol=1e-300)
    accounting = json.loads((tmp_path / "theory.json").read_text())["accounting"]
    assert accounting["eps"]["1e-06"] == pytest.approx(expected.epsilon(1e-6, "max"), rel=1e-12)
    assert accounting["rdp_eps"]["1e-06"] >= accounting["eps"]["1e-06"]           # RDP is looser
    assert accounting["route"] == "privacy-loss distribution" and accounting["eps_error"] > 0
    assert (tmp_path / "tradeoff.png").stat().st_size > 0
    assert "4 release(s) of gaussian-ls + gaussian:sigma=3, q = 0.3: eps =" in capsys.readouterr().out


def test_zcdp_of_gaussian_releases(tmp_path, capsys):
    code = main(["theory", "gaussian-ls", "--param", "sigma=0.5", "--data", DATA, "--eps", "0:1:3",
                 "--compose", "5", "--renyi", "--out", str(tmp_path)])
    assert code == 0
    accounting = json.loads((tmp_path / "theory.json").read_text())["accounting"]
    sensitivity = theory.spectrum("gaussian-ls", datasets.load(DATA), [0.0], sigma=0.5).details["sensitivity"][0]
    assert accounting["zcdp_rho"] == pytest.approx(5 * (sensitivity / 0.5) ** 2 / 2, rel=1e-9)
    assert accounting["route"] == "exact"


def test_a_large_stated_error_is_one_line_of_the_summary(tmp_path, capsys):
    # 2000 subsampled steps on a grid of 1e-3 state eps_error 2 at eps 1.2: the warning of theory.pld, as one
    # line of the summary (not Python's two-line warning on stderr), and --discretization is what it asks for
    pytest.importorskip("dp_accounting")
    code = main(["theory", "gaussian", "--param", "sigma=1", "--data", "synthetic:n=20,d=1,seed=0", "--eps", "0:1:3",
                 "--compose", "2000", "--subsample", "0.01", "--discretization", "1e-3", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 0 and "Warning" not in captured.err
    warned = [line for line in captured.out.splitlines() if "warning:" in line]
    assert len(warned) == 1 and "compose with a finer discretization (e.g. discretization=" in warned[0]
    assert json.loads((tmp_path / "theory.json").read_text())["accounting"]["eps_error"] == pytest.approx(2.0)


@pytest.mark.parametrize("options, message", [
    (["--with", "gauss:sigma=1"], "bad --with"),
    (["--with", "gaussian:sigma=-1"], "bad --with"),
    (["--compose", "0"], "--compose must be a positive"),
    (["--delta", "2"], "--delta values must lie in (0, 1)"),
    (["--subsample", "1.5"], "q must lie in (0, 1]"),
    (["--compose", "2", "--discretization", "0"], "--discretization must be a positive grid step"),
])
def test_option_mistakes_are_one_line(tmp_path, capsys, options, message):
    code = main(["theory", "gaussian-ls", "--param", "sigma=0.5", "--data", DATA, "--eps", "0:1:3", *options,
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
