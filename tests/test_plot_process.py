"""`ndis audit`'s plot helper process: the same PNG bytes as rendering in-process, a fallback when it
cannot run, and no process left behind."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis.auditor import audit
from ndis.auditor.reporting import html
from ndis.plot_process import PlotProcess


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
