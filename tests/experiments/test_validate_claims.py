"""`ndis reproduce validate-claims` (quick): published theory curves not refuted, the wrong control refuted
exactly on its wrong region by the audit and by the exact curve."""

import pandas as pd

from ndis.experiments import reproduce


def test_quick_validation_refutes_only_the_wrong_curve_and_only_where_it_is_wrong(tmp_path):
    # 4e4 samples per side (2e4 held out): the control is 30% (>= 0.04 in delta) too low on 5 grid points,
    # several times the lower bound's distance to the curve at this size (the quick run's excess: 0.044);
    # the true curves are refuted with probability <= 5% each (here seed 0).
    reproduce.run("validate-claims", out=tmp_path, quick=True)
    summary = pd.read_csv(tmp_path / "validate-claims" / "summary.csv").set_index("case")
    assert summary.loc["rp-ndis", "audit_verdict"] == "not refuted"
    assert summary.loc["als-ols-rp", "audit_verdict"] == "not refuted"
    assert summary.loc["rp-wrong", "audit_verdict"] == "refuted"
    assert summary.loc["rp-wrong", "refuted_at"] == summary.loc["rp-wrong", "exact_exceeds_claim_at"] == "[0.2, 0.4]"
    assert summary.loc["rp-ndis", "exact_exceeds_claim_at"] == "none"
    control = pd.read_csv(tmp_path / "validate-claims" / "rp-wrong.csv")
    assert control["refuted_by_audit"].sum() == 5
