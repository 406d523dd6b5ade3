"""`ndis reproduce` for Ding et al. (2022) and Showkatbakhsh et al. (2018): Table 1 of Ding et al. in full, the ISIT'18 privacy table (quick)."""

import pandas as pd

from ndis.experiments import reproduce


def test_mask_sigma_table_reproduces_every_printed_value(tmp_path):
    reproduce.run("table-mask-sigma", out=tmp_path)
    a = pd.read_csv(tmp_path / "table-mask-sigma" / "table1-A.csv")
    b = pd.read_csv(tmp_path / "table-mask-sigma" / "table1-B.csv")
    assert (a["necessary"] == a["paper_necessary"]).all() and (a["sufficient"] == a["paper_sufficient"]).all()
    assert len(b) == 36 and (b["sigma0"] == b["paper"]).all()
    assert (b["cor35"] >= b["sigma0"]).all()


def test_isit18_privacy_table_quick(tmp_path):
    reproduce.run("table-isit18-privacy", out=tmp_path, quick=True)
    table = pd.read_csv(tmp_path / "table-isit18-privacy" / "isit18-rp-privacy.csv")
    # more projections need more noise (eq. 13) and give a smaller entry-level TV, all below 0.833
    assert table["sigma2"].is_monotonic_increasing and table["tv_entry"].is_monotonic_decreasing
    assert (table["tv_entry"] < 0.833).all() and (table["tv_remove"] > table["tv_entry"]).all()
