import argparse
import io
import json

import numpy as np
import pytest

from auditor import run


def _args(*argv):
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_cli_glue_audits_a_third_party_callable_and_writes_the_files(tmp_path):
    rng = np.random.default_rng(1)
    D = rng.uniform(size=(50, 2))
    args = _args("examples.third_party_mechanism:noisy_column_means", "--data", "inline", "--neighbor", "zero:0",
                 "--samples", "6000", "--claimed", "1,1e-5", "--scorer", "quadratic", "--out", str(tmp_path))
    out = io.StringIO()
    report = run.audit_from_cli(args, D, np.linspace(0, 1, 5), {"sigma_scale": 0.25}, stream=out)
    assert {p.name for p in tmp_path.iterdir()} == {"report.json", "spectrum.csv", "spectrum.png"}
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["info"]["neighbor"] == {"relation": "zero", "row": 0, "how": "given"}
    assert saved["info"]["data"] == "inline" and saved["verdict"]["label"] == report.verdict.label
    assert "delta_hat" in out.getvalue() and "wrote" in out.getvalue()


def test_cli_glue_reports_bad_mechanism_specs():
    with pytest.raises(ValueError, match="cannot import module"):
        run.resolve_mechanism("no_such_module_xyz:f", {})
    with pytest.raises(ValueError, match="has no attribute"):
        run.resolve_mechanism("examples.third_party_mechanism:missing", {})
    with pytest.raises(ValueError, match="EPS,DELTA"):
        run.parse_claimed("1;1e-5")
    mech = run.resolve_mechanism("gaussian", {"sigma": 2.0})
    assert mech.params["sigma"] == 2.0
