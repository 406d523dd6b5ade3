"""Claimed curves on the command line: `ndis theory --claimed-curve` (exact, no sampling) and
`ndis audit --claimed-curve / --claimed-gdp`."""

import json
import pathlib

import numpy as np
import pytest

from ndis.cli import main

THEORY = ["theory", "rp", "--param", "r=10", "--data", "synthetic:n=200,d=3,seed=1", "--eps", "0:2:41"]


def test_theory_finds_where_the_exact_curve_exceeds_a_claimed_curve(tmp_path, capsys):
    assert main(THEORY + ["--out", str(tmp_path / "exact")]) == 0
    table = np.genfromtxt(tmp_path / "exact" / "spectrum.csv", delimiter=",", names=True)
    eps, delta = table["eps"], table["delta"]
    wrong = (eps >= 0.2 - 1e-9) & (eps <= 0.4 + 1e-9)
    claim = tmp_path / "claim.csv"
    np.savetxt(claim, np.column_stack([eps, np.where(wrong, 0.7 * delta, delta)]), delimiter=",",
               header="eps,delta", comments="")
    capsys.readouterr()
    assert main(THEORY + ["--claimed-curve", str(claim), "--out", str(tmp_path / "check")]) == 0
    out = capsys.readouterr().out
    assert "exceeds the claim" in out and "[0.2, 0.4] (5 of 41 claimed grid points)" in out
    saved = json.loads((tmp_path / "check" / "theory.json").read_text())["claim"]
    assert saved["regions"] == [[0.2, 0.4]] and saved["points"] == 5
    # the exact curve itself, as a claim, is not exceeded anywhere
    assert main(THEORY + ["--claimed-curve", str(tmp_path / "exact" / "spectrum.csv"),
                          "--out", str(tmp_path / "same")]) == 0
    assert "does not exceed the claim" in capsys.readouterr().out


def test_audit_checks_a_claimed_curve_and_prints_mu_lo(tmp_path, capsys):
    # The example's replace-one pair with the debugging leftover sigma_scale=0.25 is about 1-GDP (its
    # audit at 2e4 per side certifies mu_lo of about 1.0): the claim 0.5-GDP is refuted at every eps.
    data = pathlib.Path(__file__).resolve().parents[1] / "examples" / "unit_square.csv"
    argv = ["audit", "examples.third_party_mechanism:noisy_column_means", "--param", "sigma_scale=0.25",
            "--data", str(data), "--neighbor", "replace:0", "--replacement", "1,1", "--samples", "20000",
            "--eps", "0:1:5", "--scorer", "quadratic", "--seed", "0", "--claimed-gdp", "0.5", "--out", str(tmp_path)]
    assert main(argv) == 3                                          # the claim is refuted: exit status 3
    out = capsys.readouterr().out
    assert "claimed curve (0.5-GDP) refuted at eps in [0, 1]" in out and "mu_lo" in out
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["claim"]["label"] == "refuted" and saved["mu_lo"]["mu_lo"] > 0.5
    assert "Claimed curve: refuted" in (tmp_path / "report.html").read_text()


@pytest.mark.parametrize("extra,message", [
    (["--claimed", "1,1e-5", "--claimed-gdp", "1"], "give one of --claimed"),
    (["--claimed-curve", "missing.csv"], "not found"),
    (["--claimed-gdp", "-1"], "mu must be finite and > 0"),
])
def test_bad_claims_give_one_line_and_exit_2(extra, message, tmp_path, capsys):
    argv = ["audit", "gaussian", "--data", "flights:100", *extra, "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
