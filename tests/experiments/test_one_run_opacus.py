"""The Opacus one-run experiment end to end at a small size: the claim is Opacus's accountant at the
eps asked for, the seed re-runs it exactly, and the command line writes the report."""

import pytest

pytest.importorskip("opacus")

from ndis.cli import main  # noqa: E402
from ndis.experiments import one_run_opacus  # noqa: E402


def test_a_small_run_is_claimed_at_the_asked_eps_and_reproducible():
    report = one_run_opacus.run(4.0, canaries=60, steps=2, hidden=20, seed=3, idealized_runs=2)
    accountant = report.info["accountant"]
    assert abs(accountant["eps"] - 4.0) < 0.02 and accountant["exact_eps"] <= accountant["eps"]
    assert report.claimed_eps == accountant["eps"] and report.scores.size == 60
    assert report.info["params"]["steps"] == 2 and 0 <= report.info["training_accuracy"] <= 1
    again = one_run_opacus.run(4.0, canaries=60, steps=2, hidden=20, seed=3, idealized_runs=2)
    assert (again.scores == report.scores).all() and again.eps_lo == report.eps_lo


def test_too_many_canaries_for_the_blank_pixels_is_one_line():
    with pytest.raises(ValueError, match="61 Dirac canaries need as many blank-pixel weights, but a hidden layer of 20"):
        one_run_opacus.run(4.0, canaries=61, steps=1, hidden=20, seed=0)


def test_the_command_line_trains_once_and_writes_the_report(tmp_path, capsys):
    assert main(["audit-one-run", "opacus-digits", "--eps", "8", "--canaries", "40", "--steps", "1", "--seed", "5",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "accountant: Opacus PRV accountant, sample rate 1" in out and "--seed 5 re-runs" in out
    assert (tmp_path / "report.html").exists()
