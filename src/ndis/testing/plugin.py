"""The pytest plugin of ndis (entry point group `pytest11`): error control over a session's privacy audits.

Loaded in every pytest session where ndis is installed, it imports nothing but the standard library
and pytest, and changes nothing unless a test audits: it adds the marker `dp_audit(audits=1)`, the
fixture `assert_dp` and the options below. When collection is done it counts the K audits declared
by the selected tests and gives each the level alpha / K (`ndis.testing.family`); at the end of the
session it runs Holm's step-down over the audits' p-values, prints a summary line and, with
--ndis-summary, writes every audit's evidence, seed and samples used as JSON. A test rerun in the
session (pytest-rerunfailures) replays its seeds and counts once, with its last attempt's records.
An audit that runs longer than --ndis-progress-after seconds shows its progress on the terminal
without -s (`ndis.testing.terminal`)."""

from __future__ import annotations

import contextlib

import pytest

from . import family as family_module, terminal

_FAMILY = pytest.StashKey()
MARKER = "dp_audit"


def pytest_addoption(parser):
    group = parser.getgroup("ndis", "ndis privacy audits (ndis.testing)")
    group.addoption("--ndis-alpha", type=float, default=family_module.DEFAULT_ALPHA, metavar="ALPHA",
                    help="family-wise error budget of the session's audits: the chance that any audit of a mechanism "
                         "meeting its claim fails is at most ALPHA (default 0.05); each of the K audits runs at "
                         "ALPHA / K")
    group.addoption("--ndis-seed", type=int, default=None, metavar="SEED",
                    help="session seed; every audit's seed derives from it and the test's node id (default: "
                         "$NDIS_SEED, else 0 when $CI is set, else fresh entropy; always printed and recorded)")
    group.addoption("--ndis-summary", default=None, metavar="PATH",
                    help="write a JSON summary of every audit (claim, verdict, p-value, eps_lo, event, samples "
                         "used, seed) to PATH")
    group.addoption("--ndis-no-holm", action="store_true",
                    help="do not run Holm's step-down over the audits' p-values at the end of the session")
    group.addoption("--ndis-progress-after", type=float, default=terminal.AFTER, metavar="SECONDS",
                    help=f"show the progress of an audit on the terminal, without -s, once it has run SECONDS "
                         f"(default {terminal.AFTER:g}; 0: every audit's)")


def pytest_configure(config):
    config.addinivalue_line("markers", f"{MARKER}(audits=1): the test calls ndis.testing.assert_dp `audits` times; "
                                       "its audits share the session's family-wise error budget (--ndis-alpha)")


def _declared(item) -> int:
    """The audits `item` declares: its marker's count, 1 for the assert_dp fixture, else 0."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        audits = marker.kwargs.get("audits", marker.args[0] if marker.args else 1)
        if not isinstance(audits, int) or isinstance(audits, bool) or audits < 1:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARKER}(audits=...) takes an integer >= 1, "
                                    f"got {audits!r}")
        return audits
    return 1 if "assert_dp" in getattr(item, "fixturenames", ()) else 0


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    declared = {item.nodeid: count for item in session.items if (count := _declared(item))}
    if not declared:
        return
    options = session.config.option
    seed, source = family_module.session_seed(options.ndis_seed)
    try:
        family = family_module.Family(options.ndis_alpha, seed, source, declared, holm=not options.ndis_no_holm)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    session.config.stash[_FAMILY] = family
    family.activate()


def _terminal(item) -> terminal.Terminal | None:
    """The test's `terminal.Terminal`: a line written through the terminal reporter with pytest's capture
    suspended (None without a terminal reporter: `-p no:terminal`)."""
    config = item.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None
    capture = config.pluginmanager.get_plugin("capturemanager")

    def write(line: str):
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            reporter.write_line(line)

    return terminal.Terminal(write, item.nodeid, config.option.ndis_progress_after)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with contextlib.ExitStack() as stack:
        found = _terminal(item)
        if found is not None:
            stack.callback(found.remove, found.install())
        family = item.config.stash.get(_FAMILY, None)
        if family is not None and item.nodeid in family.declared:
            stack.callback(family.leave, family.enter(item.nodeid))
        yield


@pytest.fixture
def assert_dp():
    """`ndis.testing.assert_dp`; a test using this fixture counts as one audit of the session's family."""
    from .assertions import assert_dp as function

    return function


def pytest_sessionfinish(session, exitstatus):
    family = session.config.stash.get(_FAMILY, None)
    if family is None:
        return
    family.deactivate()
    family.finish()
    path = session.config.option.ndis_summary
    if path:
        family.write_summary(path)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    family = config.stash.get(_FAMILY, None)
    if family is None:
        return
    records = family.records
    failed = sum(r["failed"] for r in records)
    used = sum(r["samples_used"] for r in records)
    budget = sum(r["budget"] for r in records)
    terminalreporter.write_sep("-", "ndis privacy audits")
    terminalreporter.write_line(
        f"{len(records)} of {family.size} declared audit(s) ran, each at level {family.alpha:g} / {family.size} = "
        f"{family.level:.3g} (family-wise alpha {family.alpha:g}); {failed} refuted their claim; samples used "
        f"{used:,} of {budget:,} per side in all")
    terminalreporter.write_line(f"session seed {family.seed} ({family.seed_source}): --ndis-seed {family.seed} "
                                "replays every audit")
    for record in family.holm_rejected:
        terminalreporter.write_line(
            f"SESSION FAILURE (Holm's step-down at family-wise {family.alpha:g}): {record['test']}: {record['claim']} "
            f"of {record['mechanism']} refuted, p = {record['p_value']:.3g}", red=True)
    if config.option.ndis_summary:
        terminalreporter.write_line(f"wrote {config.option.ndis_summary}")
