"""`ndis reproduce`: the registry, the written outputs, and the theory-only reproductions' numbers."""

import json

import pandas as pd
import pytest

from ndis.experiments import datasets, reproduce
from ndis.cli import main


def test_list_names_every_reproduction(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in reproduce.names())


def test_gaussian_tight_reproduces_the_reference_factors(tmp_path):
    record = reproduce.run("fig-gaussian-tight", out=tmp_path, quick=True)
    table = pd.read_csv(tmp_path / "fig-gaussian-tight" / "gaussian-tight.csv")
    # Lu et al. (2023, OLS-RP), Proposition 2: at eps0 = 1 the classic sigma overstates delta0 = 1e-5 by 243x, 1e-6 by 313x
    assert table["overstatement"].tolist() == pytest.approx([243.0, 313.0], rel=2e-3)
    assert table["noise_saving"].round(3).tolist() == [0.23, 0.203]
    assert json.loads((tmp_path / "fig-gaussian-tight" / "run.json").read_text())["seconds"] == record["seconds"]
    assert (tmp_path / "fig-gaussian-tight" / "fig-gaussian-tight.png").exists()


def test_unknown_reproduction_is_a_usage_error(tmp_path, capsys):
    assert main(["reproduce", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown reproduction" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["fig-rp-inherent", "fig-privacy-utility", "table-rp-utility", "table-ls-utility"])
def test_quick_runs_write_markdown(name, tmp_path):
    reproduce.run(name, out=tmp_path, quick=True)
    assert (tmp_path / name / "results.md").read_text().startswith(f"# {name}")


def test_without_the_cancer_table_a_reproduction_runs_on_flight_and_says_how_to_add_it(tmp_path, monkeypatch):
    monkeypatch.delenv(datasets.CANCER_VARIABLE, raising=False)
    reproduce.run("fig-privacy-utility", out=tmp_path, quick=True)
    folder = tmp_path / "fig-privacy-utility"
    assert sorted(path.name for path in folder.glob("*.csv")) == ["flight-eps1.csv"]
    assert f"Cancer skipped: {datasets.CANCER_MISSING}" in (folder / "results.md").read_text()


def test_rp_table_rows_use_each_schemes_calibration(tmp_path):
    # The quick run keeps the first 20,000 Flight rows, so the published Flight cells (full data) do not
    # apply; what must hold is that every row carries its scheme's own calibration on that data:
    # no noise for RP, Sheffet's c2 and ISIT'18's sigma at eps = 1, delta = 1/n, r = 1200 (spec M5, M12).
    import numpy as np

    from ndis import theory
    from ndis.experiments import datasets

    reproduce.run("table-rp-utility", out=tmp_path, quick=True)
    table = pd.read_csv(tmp_path / "table-rp-utility" / "table-III.csv")
    flight = table[table["dataset"] == "Flight"].set_index("method")
    D = datasets.flights(rows=20_000)
    n, C = D.shape[0], float(np.linalg.norm(D, axis=1).max())
    assert flight.loc["RP", "sigma_or_c2"] == 0.0
    assert flight.loc["[15]", "sigma_or_c2"] == pytest.approx(theory.sheffet_c2(1.0, 1 / n, 1200, C), rel=1e-12)
    f = theory.isit18_column_bound(D)
    assert flight.loc["[17]", "sigma_or_c2"] == pytest.approx(theory.isit18_sigma(1.0, 1 / n, 1200, f), rel=1e-12)


def _quick_table(tmp_path, name, table):
    """Quick run of `name` (its smoke test: markdown and PNG written), then one of its CSV tables."""
    reproduce.run(name, out=tmp_path, quick=True)
    assert (tmp_path / name / "results.md").read_text().startswith(f"# {name}")
    assert (tmp_path / name / f"{name}.png").exists()
    return pd.read_csv(tmp_path / name / f"{table}.csv")


def test_als_spectrum_theory_lies_in_the_audit_band(tmp_path):
    summary = _quick_table(tmp_path, "fig-als-spectrum", "summary")
    assert set(summary["dataset"]) == {"Flight-20000"} | ({"Cancer"} if datasets.cancer_path() else set())
    assert summary["theory_in_band_all_eps"].all()
    # the estimate at eps = 0 is within 0.05 of the asymptotic theory (20,000 samples per side)
    assert ((summary["estimate_at_eps_0"] - summary["theory_at_eps_0"]).abs() < 0.05).all()


def test_rlc_spectrum_noise_lowers_delta_and_theory_is_in_band(tmp_path, cancer_csv):
    summary = _quick_table(tmp_path, "fig-rlc-spectrum", "summary").set_index("mechanism")
    assert summary["theory_in_band_all_eps"].all()
    assert summary.loc["M_RLC", "sigma"] > 0 and summary.loc["RLC", "sigma"] == 0
    assert summary.loc["M_RLC", "theory_at_eps_1"] < summary.loc["RLC", "theory_at_eps_1"]


def test_seed001_entry_spectra_respect_the_mi_dp_bound(tmp_path):
    spectra = _quick_table(tmp_path, "seed001-privacy-utility", "entry-spectra").set_index("scheme")
    # Showkatbakhsh et al. (2018): AN at eps_MI = 0.5 has TV 0.6827 for the worst flip, below sqrt(2 * 0.5 ln 2)
    assert spectra.loc["AN", "delta_0"] == pytest.approx(0.6827, abs=1e-4)
    assert spectra["claim_holds"].all()


def test_seed002_laplace_at_the_experiments_scale_is_caught(tmp_path):
    audits = _quick_table(tmp_path, "seed002-sketching", "audits").set_index("mechanism")
    loose = audits.loc[[m for m in audits.index if "1/eps" in m]].iloc[0]
    assert loose["audit_verdict"] == "violation" and loose["lower_at_claimed_eps"] > 0.1
    gauss = audits.loc[[m for m in audits.index if m.startswith("ltm-gauss")]]
    assert (gauss["audit_verdict"] != "violation").all()


def test_seed003_masking_reproduces_table1_and_audits_agree_with_exact(tmp_path):
    audits = _quick_table(tmp_path, "seed003-masking", "audits")
    b = pd.read_csv(tmp_path / "seed003-masking" / "table1-B.csv")
    assert (b["sigma0"] == b["paper"]).all()
    assert audits["lower_below_exact"].all()
    assert (audits["audit_verdict"] != "violation").all()
