"""The pytest plugin (ndis.testing.plugin) in pytest sessions run here: it changes nothing unless a test
audits and imports nothing heavy; it counts the declared audits, gives each alpha / K and a seed from
the session seed and the node id, fails a test on a refuted claim with the evidence in the report
(and in JUnit XML), writes the JSON summary, and names Holm's session-level failures."""

import inspect
import json
import pathlib
import re
import subprocess
import sys
import warnings

import numpy  # noqa: F401  imported here, so that the in-process sessions below share it: pytester
import pytest  # removes the modules a session imported, and numpy cannot be imported twice in a process

import ndis.auditor  # noqa: F401  (likewise, and the sessions need not import it again)
from ndis.testing import UncountedAudit, assertions, family  # noqa: F401

MECHANISM = '''
import numpy as np
import pytest
from ndis.testing import assert_dp

def laplace(data, n, rng):
    return np.asarray(data, float)[0] + rng.laplace(0.0, 1.0, (n, 1))

PAIR = np.array([0.0]), np.array([1.0])
SMALL = dict(n_samples=4_000, scorer="quadratic")
'''


@pytest.fixture(scope="module", autouse=True)
def audit_modules_imported():
    """One small audit outside the sessions below, so that the modules an audit imports on first use
    (scipy's, scikit-learn's, pandas) are imported once and shared by them, as numpy is above."""
    namespace = {}
    exec(MECHANISM, namespace)
    with warnings.catch_warnings():   # outside this session's counted audits, on purpose
        warnings.simplefilter("ignore", UncountedAudit)
        namespace["assert_dp"](namespace["laplace"], *namespace["PAIR"], eps=3.0, seed=0, **namespace["SMALL"])


def _summary(pytester, name="summary.json"):
    return json.loads((pytester.path / name).read_text())


def test_importing_the_plugin_imports_no_numerical_library():
    code = "import sys, ndis.testing.plugin; print(sorted({'numpy', 'scipy', 'torch'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_session_without_audits_is_left_alone(pytester):
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "ndis privacy audits" not in result.stdout.str() and not list(pytester.path.glob("*.json"))


def test_declared_audits_share_alpha_and_get_seeds_from_the_node_id(pytester):
    pytester.makepyfile(MECHANISM + '''
def test_fixture(assert_dp):
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)

@pytest.mark.dp_audit(audits=2)
def test_marked():
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)

def test_not_an_audit():
    pass
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--ndis-seed=5", "--ndis-alpha=0.06",
                                "--ndis-summary=summary.json")
    result.assert_outcomes(passed=3)
    assert "ndis: " not in result.stdout.str()  # audits shorter than --ndis-progress-after (30 s) show no progress
    result.stdout.fnmatch_lines(["*3 of 3 declared audit(s) ran, each at level 0.06 / 3 = 0.02*",
                                 "*session seed 5 (--ndis-seed): --ndis-seed 5 replays every audit*"])
    summary = _summary(pytester)
    assert (summary["audits_declared"], summary["audits_run"], summary["failed"]) == (3, 3, 0)
    for record in summary["audits"]:
        assert record["level"] == pytest.approx(0.02)
        assert record["seed"]["entropy"] == family.test_seed(5, record["test"], record["index"])
    assert sorted(r["index"] for r in summary["audits"]) == [0, 0, 1]


def test_a_refuted_claim_fails_its_test_with_the_evidence_and_the_seed_replays_it(pytester):
    pytester.makepyfile(MECHANISM + '''
def test_wrong_claim(assert_dp):
    assert_dp(laplace, np.array([0.0]), np.array([3.0]), eps=0.5, **SMALL)
''')
    runs = [pytester.runpytest("-p", "no:cacheprovider", "--ndis-seed=9", f"--ndis-summary=s{i}.json",
                               f"--junitxml=junit{i}.xml") for i in range(2)]
    for result in runs:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*PrivacyViolation: (0.5, 0)-DP of laplace is refuted at level 0.05*",
                                     "*eps_lo = *", "*samples used: *", "*replay: assert_dp(..., alpha=0.05, seed=*"])
    xml = (pytester.path / "junit0.xml").read_text()
    assert "refuted at level 0.05" in xml and "eps_lo = " in xml
    first, second = (_summary(pytester, f"s{i}.json")["audits"] for i in range(2))
    assert first[0]["failed"] and first == [dict(second[0], seconds=first[0]["seconds"])]


def test_the_replay_line_runs_as_printed_in_the_same_counted_test(pytester):
    # a refutation in a session of 3 counted audits prints its replay line; added to the same call
    # (`...` stands for the call's own arguments), in the same test, it replays the same audit both in
    # that session and with the test run alone (K = 1), where the level the line gives is below alpha / K
    call = "laplace, np.array([0.0]), np.array([3.0]), eps=0.5, **SMALL"
    others = "\n@pytest.mark.dp_audit(audits=2)\ndef test_other():\n    pass\n"
    pytester.makepyfile(test_replay=MECHANISM + f"\ndef test_wrong_claim(assert_dp):\n    assert_dp({call})\n" + others)
    first = pytester.runpytest("-p", "no:cacheprovider", "--ndis-seed=9", "--ndis-summary=s0.json")
    first.assert_outcomes(failed=1, passed=1)
    line = re.search(r"replay: (assert_dp\(.*\))$", first.stdout.str(), flags=re.M).group(1)
    (original,) = _summary(pytester, "s0.json")["audits"]
    pasted = f"\ndef test_wrong_claim(assert_dp):\n    {line.replace('...', call)}\n"
    for name, text in (("same_session", pasted + others), ("alone", pasted)):
        pytester.makepyfile(test_replay=MECHANISM + text)
        again = pytester.runpytest("-p", "no:cacheprovider", "--ndis-seed=9", f"--ndis-summary={name}.json")
        again.stdout.fnmatch_lines(["*PrivacyViolation: (0.5, 0)-DP of laplace is refuted at level 0.01667*"])
        (replayed,) = _summary(pytester, f"{name}.json")["audits"]
        assert replayed == dict(original, seconds=replayed["seconds"])
    assert "alpha=0.016666666666666666, seed=" in line  # the level 0.05 / 3 exactly


def test_a_rerun_test_counts_once_and_the_session_ends_with_its_summary(pytester):
    # pytest-rerunfailures runs a failed test again: the rerun replays the same seed, and the session
    # ends with its summary line and JSON holding one record per declared audit, the last attempt's
    pytester.makepyfile(MECHANISM + '''
def test_wrong_claim(assert_dp):
    assert_dp(laplace, np.array([0.0]), np.array([3.0]), eps=0.5, **SMALL)
''')
    once = pytester.runpytest("-p", "no:cacheprovider", "--ndis-seed=9", "--ndis-summary=once.json")
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "rerunfailures", "--reruns=1", "--ndis-seed=9",
                                "--ndis-summary=rerun.json")
    outcomes = result.parseoutcomes()
    assert (outcomes.get("failed"), outcomes.get("rerun")) == (1, 1) and result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*1 of 1 declared audit(s) ran*1 refuted their claim*", "*wrote rerun.json*"])
    (first,), (record,) = _summary(pytester, "once.json")["audits"], _summary(pytester, "rerun.json")["audits"]
    assert record == dict(first, seconds=record["seconds"])
    assert "ValueError" not in result.stdout.str() + result.stderr.str()


def test_a_long_audit_shows_its_progress_without_s(pytester):
    # the audit's lines reach the terminal past pytest's capture: with --ndis-progress-after 0 every
    # audit is "long", and the lines of a passing test (whose captured output pytest never shows) are in
    # the session's output (with the default, 30 s, short audits show none: the test below)
    pytester.makepyfile(MECHANISM + '''
def test_audit(assert_dp):
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)
''')
    shown = pytester.runpytest("-p", "no:cacheprovider", "--ndis-progress-after=0")
    shown.assert_outcomes(passed=1)
    shown.stdout.fnmatch_lines(["ndis: test_a_long_audit_shows_its_progress_without_s.py::test_audit: assert_dp of "
                                "(3, 0)-DP has run * s; its progress follows (--ndis-progress-after 0)",
                                "ndis: round 1 of 1: a screening audit of 1,000 samples per side, then up to 3,000 "
                                "to confirm",
                                "ndis: training samples on D: 500 samples in *",
                                "ndis: round 1: confirmation samples on D': 2,000 samples in *"])


def test_an_undeclared_second_audit_fails_the_test(pytester):
    pytester.makepyfile(MECHANISM + '''
def test_two(assert_dp):
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*UndeclaredAudit*declared 1 audit(s)*dp_audit(audits=2)*"])


def test_a_failing_audit_shows_no_frame_of_ndis(pytester):
    # pytest's long traceback shows each frame's source up to the raise: the failures must end at the
    # test's own call, with no line of ndis's source files and no path into them
    pytester.makepyfile(MECHANISM + '''
def test_wrong_claim(assert_dp):
    assert_dp(laplace, np.array([0.0]), np.array([3.0]), eps=0.5, **SMALL)

def test_two(assert_dp):
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)
    assert_dp(laplace, *PAIR, eps=3.0, **SMALL)
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--ndis-seed=9")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "PrivacyViolation: (0.5, 0)-DP of laplace is refuted" in out and "UndeclaredAudit: " in out
    for module in (assertions, family):
        assert pathlib.Path(module.__file__).name not in out
        source = {line.strip() for line in inspect.getsource(module).splitlines() if len(line.strip()) > 15}
        assert not [line for line in out.splitlines() if line.lstrip(">E ").strip() in source]


def test_a_bad_marker_is_a_usage_error(pytester):
    pytester.makepyfile("import pytest\n\n@pytest.mark.dp_audit(audits=0)\ndef test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*dp_audit(audits=...) takes an integer >= 1, got 0*"])


def test_on_ci_the_session_seed_is_fixed(pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("NDIS_SEED", raising=False)
    pytester.makepyfile("import pytest\n\n@pytest.mark.dp_audit\ndef test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--ndis-summary=summary.json")
    result.stdout.fnmatch_lines([f"*session seed {family.CI_SEED} (CI)*"])
    assert _summary(pytester)["audits_run"] == 0


def test_holm_names_a_session_level_failure_after_a_failed_test(pytester):
    # three recorded audits with chosen p-values: 0.015 <= 0.05/3 fails its test; Holm then takes
    # 0.024 <= 0.05/2 too (a session-level failure); 0.5 stays
    pytester.makepyfile('''
import pytest
from ndis.testing import family

def record(p, failed):
    slot = family.current()
    slot.next_seed()
    slot.record({"mechanism": "m", "claim": "c", "p_value": p, "failed": failed, "session_failure": False,
                 "samples_used": 1, "budget": 1})
    assert not failed, "refuted"

@pytest.mark.dp_audit
def test_a():
    record(0.015, True)

@pytest.mark.dp_audit
def test_b():
    record(0.024, False)

@pytest.mark.dp_audit
def test_c():
    record(0.5, False)
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--ndis-summary=summary.json")
    result.assert_outcomes(failed=1, passed=2)
    result.stdout.fnmatch_lines(["*SESSION FAILURE (Holm's step-down at family-wise 0.05): *test_b*p = 0.024*"])
    summary = _summary(pytester)
    assert [r["test"].rpartition("::")[2] for r in summary["audits"] if r["session_failure"]] == ["test_b"]
    without = pytester.runpytest("-p", "no:cacheprovider", "--ndis-no-holm")
    assert "SESSION FAILURE" not in without.stdout.str()
