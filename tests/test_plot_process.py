"""`ndis audit`'s plot helper process: the same PNG bytes as rendering in-process (its drawing split
between two processes included), a fallback when it cannot run, and no process left behind."""

import dataclasses
import os
import sys

import numpy as np
import pytest

from ndis import mechanisms
from ndis.auditor import audit
from ndis.auditor.reporting import html
from ndis.plot_process import PlotProcess, _render_in_two

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the helper forks only on Linux")


@pytest.fixture(scope="module")
def report():
    mech = mechanisms.get("gaussian", query="sum", sigma=1.0)
    D = np.ones((3, 1))
    return audit(mech, D, D[:-1], neighbor="remove", eps=np.linspace(0, 2, 9), n_samples=4_000, seed=3,
                 scorer="quadratic", claimed=(0.5, 1e-5), progress=False)


def test_the_helper_renders_the_bytes_this_process_would(report):
    with PlotProcess() as plot:
        assert plot._process is not None
        png = plot.png(report, "a title <b>")
    assert png == html.render_png(report.plot(title="a title <b>"))


def test_without_the_helper_the_png_is_rendered_here(report, monkeypatch):
    monkeypatch.setattr("sys.executable", "/nonexistent/python")  # the helper cannot start
    with PlotProcess() as plot:
        assert plot._process is None
        assert plot.png(report, None) == html.render_png(report.plot())
    monkeypatch.undo()
    with PlotProcess() as plot:  # the helper fails (here: killed) after starting
        plot._process.kill()
        assert plot.png(report, None) == html.render_png(report.plot())


def test_a_helper_not_asked_for_its_plot_is_killed_on_exit():
    with PlotProcess() as plot:
        process = plot._process
    assert process.returncode is not None  # it was waiting on its input: killed and reaped, not left behind


@linux_only
@pytest.mark.parametrize("panels", [3, 2])
def test_a_drawing_split_between_two_processes_is_the_one_drawing(report, panels):
    """The forked child's pixels (last panel, title) joined to this process's (other panels, legends):
    the bytes of the whole figure drawn at once, for the usual figure and one without a trade-off panel."""
    shown = report if panels == 3 else dataclasses.replace(report, gdp=None)
    title = "a title wide enough to reach over the panels below it, $x$ <b>"
    figure = shown.plot(title=title)
    assert len(figure.axes) == panels
    assert _render_in_two(figure) == html.render_png(shown.plot(title=title))


@linux_only
def test_a_failing_child_leaves_the_whole_drawing_to_this_process(report, monkeypatch):
    parent, draw = os.getpid(), html.draw

    def fails_in_the_child(figure):
        if os.getpid() != parent:
            raise MemoryError
        return draw(figure)

    monkeypatch.setattr(html, "draw", fails_in_the_child)
    assert _render_in_two(report.plot()) == html.render_png(report.plot())
