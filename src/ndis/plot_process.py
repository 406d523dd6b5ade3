"""spectrum.png rendered by a helper process started before the audit, so that importing matplotlib
(0.6-0.8 s here, more than the README's audit spends sampling) happens on another core while the audit
runs.

`ndis audit` starts `PlotProcess` first; the helper imports matplotlib and the report module, then
waits on its standard input for the finished report (its JSON, the same text as report.json) and a
title, and writes `html.render_png(AuditReport.plot(title=...))` to its standard output: the bytes the
audit's own process would render, since the report's JSON round-trips every number exactly. When the
helper cannot be started or fails, the PNG is rendered in this process, so a plotting error is raised
where it always was. The helper talks through pipes only, and is killed when the audit stops early
(an error, Ctrl-C, SIGTERM). It is a second interpreter importing numpy and scipy too: about 0.7 s
more CPU time, which a machine with a free core does not notice and a busy one does (the README job's
figures with and without it are in docs/auditor/benchmarks.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ndis.auditor.reporting.report import AuditReport

_PNG_END = b"IEND\xaeB`\x82"  # the last chunk of every PNG file: the bytes arrived whole


class PlotProcess:
    """Context manager: the helper process, started on entry, killed on exit if still running, reaped."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "PlotProcess":
        try:
            self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            self._process = None
        return self

    def __exit__(self, *exc: object) -> None:
        """Kill the helper if it is still running (an audit stopped early: it waits for a report; after
        `png`: it is ending), and reap it."""
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
        self._process = None

    def png(self, report: AuditReport, title: str | None) -> bytes:
        """`report.plot(title=title)` rendered as PNG bytes: by the helper, else in this process.

        Parameters
        ----------
        report : AuditReport
            The finished audit's report.
        title : str or None
            The plot's title; None for the report's own (`AuditReport.title`).

        Returns
        -------
        bytes
            The PNG file, the bytes of `html.render_png(report.plot(title=title))`.
        """
        if self._process is not None:
            payload = json.dumps({"report": report.to_json(), "title": title}).encode()
            try:
                with self._process.stdin:
                    self._process.stdin.write(payload)
                with self._process.stdout:
                    png = self._process.stdout.read()  # until the helper closes it: the whole PNG, or nothing
            except OSError:  # the helper died before reading: a broken pipe
                png = b""
            if png.startswith(b"\x89PNG") and png.endswith(_PNG_END):
                return png
        from .auditor.reporting import html

        return html.render_png(report.plot(title=title))


def main() -> None:
    """The helper: import, wait for {"report": JSON, "title": str or None} on stdin, write the PNG to stdout."""
    import matplotlib.backends.backend_agg  # noqa: F401 (imported now, while the audit runs: what the helper is for)
    import matplotlib.figure  # noqa: F401

    from .auditor.reporting import html
    from .auditor.reporting.report import AuditReport

    request = json.loads(sys.stdin.buffer.read())
    png = html.render_png(AuditReport.from_json(request["report"]).plot(title=request["title"]))
    sys.stdout.buffer.write(png)
    sys.stdout.buffer.close()  # the audit's process has its PNG now
    os._exit(0)  # nothing here needs tearing down; the interpreter's shutdown would delay the audit's exit


if __name__ == "__main__":
    main()
