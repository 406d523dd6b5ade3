"""`ndis audit-one-run`: a CSV of canary scores in, the table and five files out, written as a set; the
exit status follows the headline (3: the claim is refuted); mistakes are one line on stderr and exit
status 2."""

import subprocess
import sys
import textwrap

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
    assert main(["audit-one-run", "--scores", str(scores_csv), "--method", "fdp", "--compare", "--out",
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fdp*" in out and "gaussian model check" in out
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".lock") == ["estimates.csv", "one-run.png", "report.html", "report.json",
                                                           "scores.csv"]


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.assign(score=t.score.where(t.index != 4)), "has no score on line 6 (1 of 300 canaries)"),
    (lambda t: t.assign(score=t.score.where(t.index != 4, np.inf)), "1 of the 300 canary scores are NaN or infinite"),
    (lambda t: t.assign(included=t.included * 3), "booleans or 0/1"),
    (lambda t: t.assign(included=t.included.where(t.index != 17)), "has no included on line 19 (1 of 300 canaries)"),
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


def _laplace_csv(path, eps0, seed=4):
    rng = np.random.default_rng(seed)
    included = rng.random(1000) < 0.5
    scores = rng.laplace(size=1000) / eps0 + included
    pd.DataFrame({"score": scores, "included": included.astype(int)}).to_csv(path, index=False)
    return path


def test_a_rejected_model_does_not_refute_a_true_claim(tmp_path, capsys):
    # Laplace scores at a true eps of 2 (1.99998 at delta 1e-5), claimed 2: the Gaussian bound
    # overclaims, its checks reject it, and the headline (steinke) refutes nothing: exit 0
    path = _laplace_csv(tmp_path / "laplace.csv", 2.0)
    argv = ["audit-one-run", "--scores", str(path), "--method", "gaussian", "--claimed-eps", "2", "--out"]
    assert main([*argv, str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "the claimed eps 2 is not refuted" in out and "gaussian is not certified: model rejected" in out
    assert "REFUTED" not in out and "YES" not in out


def test_a_refuted_claim_exits_3(tmp_path, capsys):
    path = _laplace_csv(tmp_path / "laplace.csv", 8.0)
    assert main(["audit-one-run", "--scores", str(path), "--claimed-eps", "1", "--out", str(tmp_path / "o")]) == 3
    assert "the claimed eps 1 is REFUTED" in capsys.readouterr().out


def test_a_failed_write_replaces_nothing_and_says_why(scores_csv, tmp_path):
    # a file-size limit of 20 kB (the plot is larger): the earlier run's five files stay together
    out = tmp_path / "out"
    out.mkdir()
    earlier = {name: f"earlier {name}" for name in ("report.json", "estimates.csv", "scores.csv", "one-run.png",
                                                     "report.html")}
    for name, text in earlier.items():
        (out / name).write_text(text)
    code = textwrap.dedent(f"""
        import resource, sys
        from ndis.cli import main
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.RLIM_INFINITY))
        sys.exit(main(["audit-one-run", "--scores", {str(scores_csv)!r}, "--out", {str(out)!r}]))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ndis audit-one-run: error: cannot write the report files to ") and "None" not in last
    assert "File too large" in last and last.endswith("no report file was written or replaced")
    assert {name: (out / name).read_text() for name in earlier} == earlier
