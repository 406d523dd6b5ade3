"""`ndis audit --sequential`: the audit stops when the claim is refuted and says how many samples it used;
what it cannot do is one line on stderr and exit status 2."""

import json

from ndis.cli import main


def _pair(tmp_path):
    (tmp_path / "d.csv").write_text("1,1,1,1,1\n")
    (tmp_path / "dp.csv").write_text("2,1,1,1,1\n")  # StatDP's "one above": a neighbour of zoo-laplace-half
    return str(tmp_path / "d.csv"), str(tmp_path / "dp.csv")


def test_a_sequential_audit_stops_at_the_refutation(tmp_path, capsys):
    data, data_prime = _pair(tmp_path)
    code = main(["audit", "zoo-laplace-half", "--param", "eps0=0.7", "--data", data, "--data-prime", data_prime,
                 "--claimed", "0.7,0", "--sequential", "--samples", "20000", "--eps", "0.7", "--scorer", "quadratic",
                 "--seed", "3", "--out", str(tmp_path / "out")])
    assert code == 3                                                # refuted: exit status 3
    out = capsys.readouterr().out
    assert "sequential: 10,000 of 20,000 samples per side used; refuted in round 1 of 1, look 1" in out
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"]["label"] == "violation" and report["samples_used"] == 10_000
    assert report["sequential"]["stopped"] == "refuted"


def test_what_a_sequential_audit_cannot_do_is_one_line(tmp_path, capsys):
    data, _ = _pair(tmp_path)
    assert main(["audit", "zoo-laplace-half", "--data", data, "--claimed", "0.7,0", "--sequential",
                 "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "ndis audit: error: a sequential audit audits a given pair: pass D_prime (audit once with neighbor=... to "
        "choose the neighbour, then audit that pair sequentially)"]
    assert main(["audit", "zoo-laplace-half", "--neighbor", "search", "--dimension", "5", "--claimed", "0.7,0",
                 "--sequential", "--out", str(tmp_path / "out")]) == 2
    assert "--sequential audits a given pair" in capsys.readouterr().err
