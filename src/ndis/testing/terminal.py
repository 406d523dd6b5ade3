"""Lines on pytest's terminal while a test runs, past output capture: the progress of long audits.

pytest captures what a test writes, so an audit's progress on stderr shows only with `-s`. The plugin
(`ndis.testing.plugin`) installs, for each test it runs, a `Terminal` whose `write` suspends the
capture and writes one line through pytest's terminal reporter (`CaptureManager.global_and_fixture_disabled`
and `TerminalReporter.write_line`: what pytest's own `capsys.disabled()` and live logging use), so the
line shows in the terminal and in the session's output, between the test results, without `-s`.

`assert_dp` passes `progress(what)` to the audit as its `progress` (`auditor.reporting.progress`, mode
"lines": a line per phase and one every 10 s of a long one). It writes nothing while the audit is
short: the lines start once the audit has run the terminal's `after` seconds (`--ndis-progress-after`,
default `AFTER`), preceded by one line naming the test.

Standard library only, like the plugin that imports it.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass

#: Seconds an audit runs before its progress shows (the default of --ndis-progress-after): longer than an
#: audit of the default size of a fast mechanism takes (a noisy count: 2.1 to 10.2 s measured on 2 busy
#: cores, the first of a process 9.7 to 17.2 s as it imports the scorers' libraries), so that only long
#: audits print, and short enough that a slow one is not silent for long (90 s observed, issue 39).
AFTER = 30.0

_TERMINAL: contextvars.ContextVar = contextvars.ContextVar("ndis_testing_terminal", default=None)


@dataclass(frozen=True)
class Terminal:
    """Where the running test `nodeid` writes lines (`write`, past capture), and after how many seconds
    of an audit its progress starts."""

    write: Callable[[str], None]
    nodeid: str
    after: float = AFTER

    def install(self):
        """Make this the running test's terminal (a token for `remove`)."""
        return _TERMINAL.set(self)

    @staticmethod
    def remove(token):
        _TERMINAL.reset(token)


def progress(what: str) -> Callable[[str], None] | None:
    """The `progress` of an audit in the running test: a callable writing the audit's lines once it has
    run the terminal's `after` seconds, the first time after a line naming the test and `what`; None
    when no test of a pytest session with the plugin is running."""
    terminal = _TERMINAL.get()
    return None if terminal is None else _Delayed(terminal, what)


class _Delayed:
    """Writes lines to `terminal` from `after` seconds after it was made (`progress`)."""

    def __init__(self, terminal: Terminal, what: str):
        self.terminal, self.what = terminal, what
        self.started, self.shown = time.perf_counter(), False

    def __call__(self, line: str):
        elapsed = time.perf_counter() - self.started
        if elapsed < self.terminal.after:
            return
        if not self.shown:
            self.shown = True
            self.terminal.write(f"ndis: {self.terminal.nodeid}: {self.what} has run {elapsed:.0f} s; its progress "
                                f"follows (--ndis-progress-after {self.terminal.after:g})")
        self.terminal.write(line)
