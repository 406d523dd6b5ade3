"""The `ndis` command line: outputs of `ndis theory` and one-line errors with exit code 2."""

import json

import numpy as np
import pytest

import theory
from experiments import datasets
from experiments.cli import main


def test_theory_command_writes_csv_png_json(tmp_path, capsys):
    code = main(["theory", "rp", "--param", "r=10", "--data", "synthetic:n=200,d=3,seed=1",
                 "--eps", "0:2:9", "--out", str(tmp_path)])
    assert code == 0
    table = np.genfromtxt(tmp_path / "spectrum.csv", delimiter=",", names=True)
    D = datasets.load("synthetic:n=200,d=3,seed=1")
    expected = theory.rp_delta(np.linspace(0, 2, 9), theory.leverages(D).max(), 10)
    np.testing.assert_allclose(table["delta"], expected, rtol=1e-12)
    assert (tmp_path / "spectrum.png").stat().st_size > 10_000
    summary = json.loads((tmp_path / "theory.json").read_text())
    assert summary["worst_row"] == int(np.argmax(theory.leverages(D)))
    assert "delta" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["theory", "nope", "--data", "flights:100"], "unknown mechanism family"),
    (["theory", "rp", "--data", "missing.csv"], "unknown dataset"),
    (["theory", "rp", "--data", "flights:100", "--eps", "a:b"], "bad eps grid"),
    (["theory", "rp", "--data", "flights:100", "--param", "r"], "bad --param"),
    (["theory", "als", "--data", "flights:100", "--param", "r=1"], "sketch size"),
])
def test_user_mistakes_give_one_line_and_exit_2(argv, message, tmp_path, capsys):
    assert main(argv + ["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_mechanisms_command_lists_every_registered_scheme(capsys):
    import mechanisms

    assert main(["mechanisms"]) == 0
    out = capsys.readouterr().out
    assert all(f"{name}:" in out for name in mechanisms.names())
