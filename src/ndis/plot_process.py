"""spectrum.png rendered by a helper process started before the audit, so that importing matplotlib
(about 0.7 s, more than the README's audit spends sampling) happens on another core while the audit runs.

`ndis audit` starts `PlotProcess` first; the helper imports matplotlib and the report module, makes
the empty figure (`report.empty_figure`), then waits on its standard input for the finished report
(its JSON, the same text as report.json) and a title, draws `AuditReport.plot` into it and writes the
PNG bytes to its standard output. On Linux it renders them with a forked child (`_render_in_two`),
the audit's process being idle meanwhile. The bytes are those the audit's own process would render
(`html.render_png`): the report's JSON round-trips every number exactly, and the two halves of the
drawing never touch the same pixel. When the helper cannot be started or fails, the PNG is rendered
in this process, so a plotting error is raised where it always was. The helper talks through pipes
only, and is killed when the audit stops early (an error, Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PNG_END = b"IEND\xaeB`\x82"  # the last chunk of every PNG file: the bytes arrived whole


class PlotProcess:
    """Context manager: the helper process, started on entry, killed on exit if still running, reaped."""

    def __init__(self):
        self._process = None

    def __enter__(self) -> "PlotProcess":
        try:
            self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            self._process = None
        return self

    def __exit__(self, *exc):
        """Kill the helper if it is still running (an audit stopped early: it waits for a report; after
        `png`: it is ending), and reap it."""
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
        self._process = None

    def png(self, report, title: str | None) -> bytes:
        """report.plot(title=title) rendered as PNG bytes: by the helper, else in this process."""
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


def _render_in_two(figure) -> bytes:
    """`html.render_png(figure)`, drawn by two processes at once: a forked child draws the last panel and
    the figure's texts (its title) into shared memory, this process the other panels and the legends.
    Each leaves the other's pixels opaque white, and the two sets of artists never share a pixel (the
    figure's margins are fixed inches, `report._fixed_layout`), so the darker of the two values of every
    pixel is the one drawing's. Should the child fail, this process draws the whole figure."""
    import math
    import mmap
    import signal

    import numpy as np

    from .auditor.reporting import html

    theirs, mine = [figure.axes[-1], *figure.texts], figure.axes[:-1] + figure.legends
    width, height = figure.get_size_inches() * html.DPI
    shared = mmap.mmap(-1, 4 * math.ceil(width) * math.ceil(height))  # anonymous: shared with the child
    child = os.fork()
    if child == 0:
        signal.alarm(10)  # a child that hangs is ended, and this process draws its part
        status = 1
        try:
            for artist in mine:
                artist.set_visible(False)
            drawn = html.draw(figure)
            np.copyto(np.frombuffer(shared, dtype=np.uint8, count=drawn.size).reshape(drawn.shape), drawn)
            status = 0
        finally:
            os._exit(status)
    for artist in theirs:
        artist.set_visible(False)
    rgba = html.draw(figure)
    if os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) != 0:
        for artist in theirs:
            artist.set_visible(True)
        return html.render_png(figure)
    np.minimum(rgba, np.frombuffer(shared, dtype=np.uint8, count=rgba.size).reshape(rgba.shape), out=rgba)
    return html.encode_png(rgba)


def main() -> None:
    """The helper: import, make the empty figure with a trade-off panel (an audit's usual plot), wait for
    {"report": JSON, "title": str or None} on stdin, write the PNG to stdout."""
    from .auditor.reporting import html
    from .auditor.reporting.report import AuditReport, empty_figure

    empty = empty_figure(tradeoff=True)
    for axis in empty.axes:  # ticks made now, not while drawing: each is a dozen artists
        axis.xaxis.get_major_ticks(8)
        axis.yaxis.get_major_ticks(8)
    request = json.loads(sys.stdin.buffer.read())
    report = AuditReport.from_json(request["report"])
    figure = report.plot(title=request["title"], figure=None if report.tradeoff is None else empty)
    png = _render_in_two(figure) if sys.platform == "linux" else html.render_png(figure)
    sys.stdout.buffer.write(png)
    sys.stdout.buffer.close()  # the audit's process has its PNG now
    os._exit(0)  # nothing here needs tearing down; the interpreter's shutdown would delay the audit's exit


if __name__ == "__main__":
    main()
