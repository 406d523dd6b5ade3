"""The family of a session's audits (ndis.testing.family): Holm's step-down and its error rate, seeds,
the declared count, session failures and the summary file."""

import json

import numpy as np
import pytest

from ndis.testing import family


def test_holm_rejects_the_step_down_run():
    # sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, then 0.03 > 0.05/2 stops
    assert family.holm([0.01, 0.04, 0.03, 0.005], 0.05, 4) == [3, 0]
    assert family.holm([0.01, 0.04, 0.03, 0.005], 0.05, 10) == [3]  # 6 audits that did not run count as p = 1


def test_holm_is_bonferroni_at_its_first_step():
    assert family.holm([0.026, 0.027], 0.05, 2) == []      # min p > alpha / K: nothing, whatever follows
    assert family.holm([0.024, 0.049], 0.05, 2) == [0, 1]  # 0.024 <= 0.025, then 0.049 <= 0.05


@pytest.mark.parametrize("dependence", ["independent", "identical"])
def test_holm_keeps_the_family_wise_error(dependence):
    # 20 true hypotheses with uniform p-values, 5,000 families at alpha = 0.05: families with any
    # rejection at most alpha + 4 standard errors, independent or all equal (Holm needs no independence)
    rng = np.random.default_rng(0)
    runs, K, alpha = 5_000, 20, 0.05
    p = rng.random((runs, K)) if dependence == "independent" else np.repeat(rng.random((runs, 1)), K, axis=1)
    rate = np.mean([bool(family.holm(list(row), alpha, K)) for row in p])
    assert rate <= alpha + 4 * np.sqrt(alpha * (1 - alpha) / runs)


def test_test_seeds_are_deterministic_and_distinct():
    seed = family.test_seed(0, "tests/test_x.py::test_a", 0)
    assert seed == family.test_seed(0, "tests/test_x.py::test_a", 0) and 0 <= seed < 2**63
    others = {family.test_seed(1, "tests/test_x.py::test_a", 0), family.test_seed(0, "tests/test_x.py::test_b", 0),
              family.test_seed(0, "tests/test_x.py::test_a", 1)}
    assert seed not in others and len(others) == 3


def test_the_session_seed_comes_from_the_option_the_environment_or_ci():
    assert family.session_seed(5, {"NDIS_SEED": "7", "CI": "true"}) == (5, "--ndis-seed")
    assert family.session_seed(None, {"NDIS_SEED": "7", "CI": "true"}) == (7, "NDIS_SEED")
    assert family.session_seed(None, {"CI": "true"}) == (family.CI_SEED, "CI")
    fresh, source = family.session_seed(None, {"CI": "false"})
    assert source == "fresh entropy" and fresh != family.session_seed(None, {})[0]
    with pytest.raises(ValueError, match="NDIS_SEED must be an integer"):
        family.session_seed(None, {"NDIS_SEED": "abc"})


def _family(**declared):
    return family.Family(0.05, 11, "--ndis-seed", declared or {"t::a": 1, "t::b": 2})


def test_each_audit_gets_alpha_over_k_and_a_declared_seed():
    f = _family()
    assert f.size == 3 and f.level == pytest.approx(0.05 / 3)
    slot = family.Slot(f, "t::b")
    assert [slot.next_seed(), slot.next_seed()] == [family.test_seed(11, "t::b", 0), family.test_seed(11, "t::b", 1)]
    with pytest.raises(family.UndeclaredAudit, match=r"dp_audit\(audits=3\)"):
        slot.next_seed()
    with pytest.raises(ValueError, match="ndis-alpha"):
        family.Family(1.5, 0, "CI", {"t::a": 1})


def test_the_running_test_is_known_only_inside_enter_and_leave():
    f = _family()
    assert family.current() is None
    token = f.enter("t::a")
    assert family.current().nodeid == "t::a" and family.current().level == f.level
    f.leave(token)
    assert family.current() is None


def test_a_test_run_again_replays_its_seeds_and_counts_its_last_attempt_once():
    f = _family()
    for attempt in ("first", "rerun"):
        token = f.enter("t::b")
        slot = family.current()
        assert [slot.next_seed(), slot.next_seed()] == [family.test_seed(11, "t::b", i) for i in (0, 1)]
        slot.record({"attempt": attempt, "p_value": 0.5})
        f.leave(token)
    assert [(r["test"], r["index"], r["attempt"]) for r in f.records] == [("t::b", 1, "rerun")]


def test_holm_names_session_failures_and_the_summary_is_written_atomically(tmp_path):
    f = _family(**{"t::a": 1, "t::b": 1, "t::c": 1})
    for nodeid, p, failed in (("t::a", 0.015, True), ("t::b", 0.024, False), ("t::c", 0.5, False)):
        slot = family.Slot(f, nodeid)
        slot.next_seed()
        slot.record({"p_value": p, "failed": failed, "session_failure": False, "samples_used": 1, "budget": 1})
    assert [r["test"] for r in f.finish()] == ["t::b"]  # 0.015 <= 0.05/3 (failed), 0.024 <= 0.05/2, 0.5 > 0.05
    path = f.write_summary(tmp_path / "sub" / "summary.json")
    summary = json.loads(path.read_text())
    assert (summary["audits_declared"], summary["failed"], summary["session_failures"]) == (3, 1, 1)
    assert summary["level_per_audit"] == pytest.approx(0.05 / 3) and summary["session_seed"] == 11
    assert [p.name for p in path.parent.iterdir()] == ["summary.json"]  # no temporary file left
    f.holm = False
    assert f.finish() == []
