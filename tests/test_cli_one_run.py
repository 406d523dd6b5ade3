"""`ndis audit-one-run`: a CSV of canary scores in, the table and five files out; mistakes are one
line on stderr and exit status 2."""

import numpy as np
import pandas as pd
import pytest

from ndis.auditor.one_run import idealized
from ndis.cli import main


@pytest.fixture(scope="module")
def scores_csv(tmp_path_factory):
    scores, included = idealized.draw(300, 2.0, 1e-5, np.random.default_rng(2))
    path = tmp_path_factory.mktemp("one-run") / "scores.csv"
    pd.DataFrame({"score": scores, "included": included.astype(int)}).to_csv(path, index=False)
    return path


def test_scores_file_is_audited_and_written(scores_csv, tmp_path, capsys):
    assert main(["audit-one-run", "--scores", str(scores_csv), "--method", "fdp", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fdp*" in out and "gaussian model check" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["estimates.csv", "one-run.png", "report.html", "report.json",
                                                           "scores.csv"]


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.assign(score=t.score.where(t.index != 4)), "1 of the 300 canary scores are NaN"),
    (lambda t: t.assign(included=t.included * 3), "booleans or 0/1"),
    (lambda t: t.head(5), "5 canaries are too few for any bound"),
    (lambda t: t.assign(score=1.0), "do not depend on the canaries"),
    (lambda t: t.rename(columns={"included": "member"}), "needs the columns score and included"),
])
def test_bad_scores_give_one_line_and_exit_2(scores_csv, edit, message, tmp_path, capsys):
    path = tmp_path / "bad.csv"
    edit(pd.read_csv(scores_csv)).to_csv(path, index=False)
    assert main(["audit-one-run", "--scores", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize("argv,message", [
    ([], "give either --scores FILE.csv"),
    (["opacus-digits"], "opacus-digits needs --eps"),
    (["--scores", "x.csv", "--eps", "2"], "go with opacus-digits"),
])
def test_argument_mistakes_give_one_line(argv, message, tmp_path, capsys):
    assert main(["audit-one-run", *argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
