"""The practitioner's path: the screen's budget, progress in samples, Ctrl-C, the samples a claim
needs, plug-in kinds, misbehaving outputs, missing optional packages and mechanisms by name."""

import gc
import inspect
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from ndis.auditor import Execution, Split, audit
from ndis.auditor.api import DEFAULT_EPS
from ndis.mechanisms import get as get_mechanism
from ndis.auditor.sampling import chunks
from ndis.auditor.statistics import bounds, verdict
from ndis.auditor.api import _samples_for_held_out
from ndis.core import budget
from ndis.core.errors import MechanismError
from ndis.experiments import datasets

from .conftest import counting_mechanism

EPS = np.linspace(0, 1, 5)
D20 = datasets.load("synthetic:n=20,d=2,seed=0")


@pytest.fixture(autouse=True)
def _collect_garbage():
    """Free the cycles these tests leave (tracebacks of the audits they make fail), so that later
    tests counting live validated datasets (tests/core/test_validation.py) see only their own."""
    yield
    gc.collect()


def test_the_neighbour_screen_spends_at_most_its_fraction_of_the_budget():
    mechanism, calls = counting_mechanism()
    report = audit(mechanism, D20, None, neighbor="remove:worst", eps=EPS, n_samples=10_000, scorer="quadratic",
                   progress=False)
    screen = report.screen
    assert report.neighbor["how"] == "screen" and report.neighbor["row"] in screen["rows"]
    assert screen["fraction"] == 0.2 and len(screen["rows"]) == len(screen["scores"]) == 2  # 2,000 per side: 2 pilots
    assert screen["samples_per_side"] == 1_000 and screen["samples"] == 4_000
    probes = 4 * (len(screen["rows"]) + 1)  # 2 samples per side for each pilot and for the audit
    assert sum(calls) == 2 * 10_000 + screen["samples"] + probes <= 1.2 * 2 * 10_000 + probes


def test_a_zero_screen_fraction_takes_the_largest_leverage_row_and_says_so(capsys):
    from ndis import theory

    mechanism, calls = counting_mechanism()
    report = audit(mechanism, D20, None, neighbor="remove:worst", eps=EPS, n_samples=4_000, scorer="quadratic",
                   progress="lines", split=Split(screen_fraction=0))
    assert report.neighbor["how"] == "max-leverage"
    assert report.neighbor["row"] == int(np.argmax(theory.leverages(D20)))
    assert "screen_fraction=0" in report.screen["skipped"] and sum(calls) == 2 * 4_000 + 4
    assert "neighbour screen skipped (screen_fraction=0" in capsys.readouterr().err
    with pytest.raises(ValueError, match="screen_fraction"):
        audit(mechanism, D20, None, neighbor="remove:worst", n_samples=4_000, split=Split(screen_fraction=1.5))


def test_every_phase_is_counted_in_samples_and_in_small_chunks(capsys):
    mechanism, calls = counting_mechanism()
    report = audit(mechanism, D20, None, neighbor="remove:0", eps=EPS, n_samples=4_000, scorer="quadratic",
                   progress="lines")
    counts = {p["phase"]: p["count"] for p in report.info["phases"]}
    assert counts == {"training samples on D": 2_000, "training samples on D'": 2_000,
                      "training 1 scorer(s) on 2 x 2,000 samples": 1,
                      "held-out samples on D (sampling + scoring)": 2_000,
                      "held-out samples on D' (sampling + scoring)": 2_000}
    assert max(calls) == 100 and len(calls) == 2 + 4 * 20  # a probe per side, then 20 chunks per phase
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 5 and all(line.startswith("ndis: ") for line in lines)
    assert "ndis: held-out samples on D' (sampling + scoring): 2,000 samples in " in lines[-1]
    assert lines[-1].endswith(" samples/s)")
    assert chunks.chunk_size_for((2,), 10**6) == 50_000 and chunks.chunk_size_for((10**6,), 10**6) == 4


@pytest.mark.parametrize("parallel", [[], ["--backend", "threads", "--jobs", "2"]], ids=["sequential", "threads"])
def test_ctrl_c_stops_at_once_and_says_what_was_done(tmp_path, parallel):
    (tmp_path / "slow_plugin.py").write_text(textwrap.dedent("""
        import time
        import numpy as np

        def slow(data, rng):
            open("started", "a").close()
            time.sleep(0.002)
            return np.asarray(data).mean(axis=0)[:2] + rng.standard_normal(2)
    """))
    command = [sys.executable, "-m", "ndis.cli", "audit", "slow_plugin:slow", "--data", "synthetic:n=20,d=2,seed=0",
               "--neighbor", "remove:0", "--samples", "1e5", "--out", str(tmp_path / "out"), *parallel]
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # SIGINT as a terminal delivers it, even when the test session itself was started in the background
    # by a shell (which makes SIGINT ignored, and children inherit that)
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.perf_counter() + 120  # imports take a few seconds; a loaded machine may take longer
    while not (tmp_path / "started").exists() and time.perf_counter() < deadline and process.poll() is None:
        time.sleep(0.1)
    time.sleep(1.0)  # well inside the first phase (50,000 calls of 2 ms)
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    sent = time.perf_counter()
    _, err = process.communicate(timeout=120)
    # the rest of the phase is ~100 s of calls: stopping well inside it shows Ctrl-C was obeyed (a generous
    # bound that a loaded machine cannot break; the latency itself is measured by benchmarks/interrupt.py)
    assert time.perf_counter() - sent < 20.0
    assert process.returncode == 130 and "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("ndis audit: interrupted during training samples on D after ")
    assert "of 50,000 samples; no phase was completed; nothing was written" in err


def _running_in_session(session: int) -> list:
    """The processes (not zombies) of a session, from /proc: a command started in its own session and the
    workers it started."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                state, _, _, in_session = stat.read().rsplit(")", 1)[1].split()[:4]
        except OSError:
            continue
        if int(in_session) == session and state != "Z":
            found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads child processes from /proc")
def test_sigterm_after_training_writes_a_partial_report_and_stops_the_workers(tmp_path):
    # before: SIGTERM killed the command at once, leaving its loky workers and resource tracker running
    # (4 of 4 processes, benchmarks/interrupt.py on main) and no report
    (tmp_path / "slow_plugin.py").write_text(textwrap.dedent("""
        import time
        import numpy as np

        def slow(data, rng):
            time.sleep(0.002)
            return np.asarray(data).mean(axis=0)[:2] + rng.standard_normal(2)
    """))
    command = [sys.executable, "-m", "ndis.cli", "audit", "slow_plugin:slow", "--data", "synthetic:n=20,d=2,seed=0",
               "--neighbor", "remove:0", "--samples", "4000", "--jobs", "2", "--scorer", "quadratic", "--eps", "0:1:3",
               "--out", str(tmp_path / "out")]
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    for line in process.stderr:  # one line per completed phase; the signal goes in the held-out phase
        if line.startswith("ndis: training 1 scorer(s)"):
            break
    workers = set(_running_in_session(process.pid)) - {process.pid}
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143 and "Traceback" not in err, err
    assert err.startswith("ndis audit: terminated (SIGTERM) ") and "; completed: training samples on D (" in err
    # the command's own message is its last line (a library's warning at exit may follow it)
    said = [line for line in err.splitlines() if line.startswith("ndis audit: terminated")]
    assert said and said[-1].endswith(f"wrote the partial report {tmp_path / 'out' / 'partial.json'}"), err
    partial = json.loads((tmp_path / "out" / "partial.json").read_text())
    assert partial["status"] == "partial" and partial["info"]["scorer"] == "quadratic/flatten"
    assert [p["phase"] for p in partial["phases_completed"]][-1] == "training 1 scorer(s) on 2 x 2,000 samples"
    assert workers  # loky's workers and resource tracker were running
    deadline = time.perf_counter() + 30  # they are shut down as the command exits; allow a loaded machine
    while _running_in_session(process.pid) and time.perf_counter() < deadline:
        time.sleep(0.2)
    assert _running_in_session(process.pid) == []


def test_the_samples_that_would_decide_a_claim_are_given(gaussian_batched):
    report = audit(gaussian_batched, np.array([1.0]), np.array([0.0]), eps=EPS, n_samples=2_000, seed=0,
                   scorer="quadratic", claimed=(3.0, 1e-6), progress=False)
    v = report.verdict
    assert v == "inconclusive" and v.floor > 1e-6
    held = bounds.samples_for_floor(3.0, 1e-6, 0.05 / 4)
    assert bounds.detectable_floor(3.0, held, held, 0.05 / 4)[0] <= 1e-6
    assert bounds.detectable_floor(3.0, held - 1, held - 1, 0.05 / 4)[0] > 1e-6
    assert v.samples_needed == _samples_for_held_out(held, 0.5, 10**6)
    assert budget.split(v.samples_needed, 0.5, 10**6, 0.25)[2] >= held
    assert report.samples_needed["samples_per_side"] == v.samples_needed and v.seconds_needed > 0
    assert f"{v.samples_needed:,} samples per side (about " in str(v)
    assert "consistent" not in verdict.LABELS and verdict.Verdict("consistent", 1, 0.1, 0.95, 0, 0, 0.1, "forward",
                                                                   0.05) == "no violation found"


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    (tmp_path / "kinds_plugin.py").write_text(textwrap.dedent("""
        import numpy as np

        def per_sample(data, rng, eps=1.0):
            return np.array([np.mean(data) + rng.standard_normal() / eps])

        def batched(data, n, rng, eps=1.0):
            return np.mean(data) + rng.standard_normal((n, 1)) / eps
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("kinds_plugin", None)


@pytest.mark.parametrize("name", ["per_sample", "batched"])
@pytest.mark.parametrize("params", [{}, {"eps": 0.7}])
def test_plug_in_kinds_come_from_the_bound_signature(plugins, name, params):
    from ndis.mechanisms import resolve

    mechanism = resolve(f"kinds_plugin:{name}", **params)
    report = audit(mechanism, D20, None, neighbor="zero:0", eps=EPS, n_samples=2_000, scorer="quadratic",
                   progress=False)
    assert report.info["kind"] == name.replace("_", "-") and report.mechanism == name


@pytest.mark.parametrize("body, message", [
    ("return np.zeros(3 if len(CALLS) > 30 else 2)",
     r"\(training samples on D\): call 26 returned shape \(3,\), earlier calls returned \(2,\)"),
    ("return None if len(CALLS) > 30 else np.zeros(2)",
     r"\(training samples on D\): call 26 returned None; expected an array of numbers of shape \(2,\)"),
    ("return 'abc' if len(CALLS) > 30 else np.zeros(2)", r"call 26 returned the string 'abc'"),
    ("return [1.0, [2.0]]", r"\(probe on D\): call 0 returned a list of values of different lengths"),
])
def test_misbehaving_outputs_name_the_call(body, message):
    namespace = {"np": np, "CALLS": []}
    exec(f"def mech(data, rng):\n    CALLS.append(1)\n    {body}\n", namespace)
    with pytest.raises(ValueError, match=message) as raised:
        audit(namespace["mech"], D20, None, neighbor="zero:0", eps=EPS, n_samples=2_000, progress=False)
    assert not isinstance(raised.value, MechanismError)


def test_a_batched_plug_in_returning_strings_is_named():
    with pytest.raises(ValueError, match=r"returned a list .* for samples 0\.\.1; expected an array of 2 numeric"):
        audit(lambda data, n, rng: ["a"] * n, D20, None, neighbor="zero:0", n_samples=2_000, progress=False)


def test_a_missing_dask_names_the_install_command(monkeypatch, gaussian_batched):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r'pip install "ndis\[distributed\]"'):
        audit(gaussian_batched, np.array([1.0]), np.array([0.0]), n_samples=2_000, progress=False,
              execution=Execution(backend="dask"))


def test_registered_mechanisms_by_name():
    report = audit(get_mechanism("gaussian", sigma=2.0, query="mean"), D20, None, neighbor="remove:0", eps=EPS,
                   n_samples=2_000, scorer="quadratic", progress=False)
    assert report.mechanism == "gaussian" and report.info["params"]["sigma"] == 2.0
    with pytest.raises(ValueError, match="gaussian needs sigma, or eps, delta and sensitivity"):
        audit("gaussian", D20, None, neighbor="remove:0")              # by name: its default parameters
    with pytest.raises(ValueError, match=r"unknown mechanism 'gausian'.*ndis\.mechanisms\.names\(\).*"
                                         r"ndis\.get_mechanism\(name, \*\*parameters\)"):
        audit("gausian", D20, None, neighbor="remove:0")


def test_the_default_eps_grid_is_the_same_in_python_and_on_the_command_line():
    from ndis.cli import build_parser, parse_grid

    audit_parser = build_parser()._subparsers._group_actions[0].choices["audit"]
    assert inspect.signature(audit).parameters["eps"].default is None      # None: the documented DEFAULT_EPS
    np.testing.assert_array_equal(DEFAULT_EPS, parse_grid(audit_parser.get_default("eps")))
