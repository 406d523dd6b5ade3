"""AuditReport's plot (curve kind, claimed point, points below the floor, no pyplot state), its
short repr, report.html's structure, and Curve's repr."""

import dataclasses
import html as markup
import json
from html.parser import HTMLParser

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from ndis import theory
from ndis.auditor.reporting import html
from ndis.auditor.reporting.report import TYPED, AuditReport
from ndis.auditor.statistics.certify import Certificate
from ndis.auditor.statistics.claims import ClaimCheck
from ndis.auditor.statistics.gdp import GDPCertificate, gaussian_tradeoff
from ndis.auditor.statistics.verdict import Verdict
from ndis.core.curve import Curve

from ..conftest import gaussian_delta_reference

EPS = np.linspace(0, 2, 41)
INFO = {"params": {"r": 300}, "theory": "asymptotic law", "versions": {"python": "3.11", "ndis": "0.2.0"},
        "command": "ndis audit als --param r=300 --claimed 1,1e-08"}
RECORDS = dict(mechanism="als", n_samples=20000, samples_used=20000, alpha=0.05,
               seed={"entropy": 1234, "spawn_key": []}, neighbor={"relation": "remove", "row": 7, "how": "mechanism"},
               sizes={"fit": 7500, "validation": 2500, "held_out": 10000}, timings={"total": 3.5, "training": 1.25})


def make_report(source="asymptotic law", claimed_delta=1e-8, **info) -> AuditReport:
    """A 41-point report: estimate near the Gaussian curve (mu = 1), the last points below the floor."""
    exact = gaussian_delta_reference(EPS, 1.0)
    estimate = exact * (1 + 0.05 * np.sin(7 * EPS))
    floor = 0.02 * np.exp(EPS / 2)
    verdict = Verdict("inconclusive", 1.0, claimed_delta, 0.95, 0.0, 0.05, 0.03, "forward", 0.05)
    return AuditReport(estimate=Curve(EPS, estimate, 0.9 * estimate),
                       lower=Curve(EPS, np.maximum(0.8 * estimate - floor, 0), np.zeros_like(EPS)),
                       upper=Curve(EPS, 1.2 * estimate + floor, 1.2 * estimate), floor=floor,
                       exact=Curve(EPS, exact, exact), verdict=verdict,
                       info={**INFO, "theory": source, **{k: v for k, v in info.items() if k not in RECORDS}},
                       **{**RECORDS, **{k: v for k, v in info.items() if k in RECORDS}})


def legend_labels(figure) -> list[str]:
    """The labels of the legend below the delta panels."""
    return [text.get_text() for text in figure.legends[0].get_texts()]


@pytest.mark.parametrize("source,params,label", [("exact law", {"r": 300}, "exact"),
                                                 ("asymptotic law", {"r": 300}, "asymptotic (r -> inf)"),
                                                 ("asymptotic law", {"m": 5}, "asymptotic"),
                                                 ("given", None, "given")])
def test_the_exact_curve_is_labelled_by_its_kind(source, params, label):
    report = make_report(source, params=params)
    assert report.theory_label == label
    labels = legend_labels(report.plot())
    assert label in labels and (label == "exact") == ("exact" in labels)


def test_the_claimed_point_stays_on_the_log_panel_below_the_floor():
    report = make_report(claimed_delta=1e-9)
    low, high = report.plot().axes[1].get_ylim()
    assert low < 1e-9 < high and report.verdict.delta < report.floor.min()


def test_points_below_the_floor_are_hollow_with_their_own_legend_entry():
    report = make_report()
    below = report.delta < report.floor
    assert below.any() and not below.all()
    figure = report.plot()
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    hollow, filled = lines["estimate below band floor"], lines["estimate (max of both directions)"]
    np.testing.assert_array_equal(hollow.get_xdata(), EPS[below])
    np.testing.assert_array_equal(filled.get_xdata(), EPS[~below])
    assert hollow.get_markerfacecolor() == "none" and filled.get_markerfacecolor() != "none"
    assert "estimate below band floor" in legend_labels(figure)


def test_plot_leaves_the_backend_and_pyplot_alone(monkeypatch, tmp_path):
    import matplotlib.pyplot as plt

    def no_switch(*args, **kwargs):
        raise AssertionError("report.plot switched the matplotlib backend")

    backend, figures = matplotlib.get_backend(), plt.get_fignums()
    monkeypatch.setattr(matplotlib, "use", no_switch)
    figure = make_report().plot(tmp_path / "spectrum.png")
    assert matplotlib.get_backend() == backend and plt.get_fignums() == figures
    assert isinstance(figure, matplotlib.figure.Figure)
    assert (tmp_path / "spectrum.png").read_bytes()[:4] == b"\x89PNG"


def test_the_report_repr_is_short_and_the_dataclass_intact():
    report = make_report()
    text = repr(report)
    assert len(text) < 1000 and text.count("\n") <= 5
    assert "als" in text and "20000" in text and "inconclusive" in text and "asymptotic (r -> inf)" in text
    summary = report._repr_html_()
    assert "<table>" in summary and "Verdict: inconclusive" in summary and "data:image" not in summary
    assert [f.name for f in dataclasses.fields(report)] == ["estimate", "lower", "upper", "floor", "exact",
                                                           "verdict", "certificates", "info", "evidence",
                                                           "claim", "gdp", *TYPED]
    assert report == report and report != make_report()  # eq=False: identity


def test_curve_and_spectrum_reprs_are_short():
    curve = Curve(EPS, gaussian_delta_reference(EPS, 1.0), 0.5 * gaussian_delta_reference(EPS, 1.0))
    assert repr(curve) == "Curve(41 eps in [0, 2], max delta 0.3829 at eps 0, larger direction: forward)"
    assert curve._repr_html_().count("<tr>") == 12
    D = np.random.default_rng(0).standard_normal((50, 3))
    spectrum = theory.spectrum("rp", D, EPS, r=10)
    assert repr(spectrum).startswith("Spectrum(41 eps") and len(repr(spectrum)) < 200
    assert dataclasses.fields(spectrum)[:3] == dataclasses.fields(curve)


class _Checker(HTMLParser):
    """Tag nesting, external references and the text of an HTML5 page."""

    VOID = {"meta", "img", "br", "link", "input", "hr", "source"}

    def __init__(self):
        super().__init__()
        self.open, self.errors, self.tags, self.text, self.doctype = [], [], [], [], None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.errors.append(f"unbalanced </{tag}>")

    def handle_data(self, data):
        self.text.append(data)


def test_the_html_page_is_self_contained_html5(tmp_path):
    report = make_report()
    text = report.to_html(tmp_path / "sub" / "report.html")
    assert (tmp_path / "sub" / "report.html").read_text(encoding="utf-8") == text
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.doctype == "DOCTYPE html" and not checker.errors and not checker.open
    names = [tag for tag, _ in checker.tags]
    assert names[:2] == ["html", "head"] and names.count("title") == 1 and "script" not in names
    assert "link" not in names and "http" not in text.replace("http-equiv", "")
    (img,) = [attrs for tag, attrs in checker.tags if tag == "img"]
    assert img["src"].startswith("data:image/png;base64,") and img["alt"]
    assert names.count("tr") == EPS.size + 1
    words = " ".join(checker.text)
    for expected in ("Verdict: inconclusive", "asymptotic (r -> inf)", INFO["command"], "1234", "held_out=10000",
                     "remove row 7", "total 3.50 s", "ndis 0.2.0", "below"):
        assert expected in words or expected in text, expected


def test_the_verdict_box_is_styled_by_its_whole_label():
    # "no violation found" must not pick up the style of the word "violation" (red box)
    from dataclasses import replace

    report = make_report()
    report.verdict = replace(report.verdict, label="no violation found")
    page = report.to_html()
    assert 'class="verdict no-violation-found"' in page and 'class="verdict violation' not in page


@pytest.mark.parametrize("label,eps_lo,disagree", [("no violation found", 1.2, True), ("no violation found", 1.0, False),
                                                   ("violation", 0.8, True), ("violation", 1.3, False),
                                                   ("inconclusive", 0.9, False)])
def test_a_verdict_and_eps_lo_that_disagree_about_the_claimed_eps_are_pointed_out(label, eps_lo, disagree):
    """eps_lo > eps0 refutes (eps0, delta0) by itself (not DP for any eps < eps_lo); eps_lo = eps0 does not."""
    report = make_report(claimed_delta=1e-8)
    report.verdict = dataclasses.replace(report.verdict, label=label)
    report.certificates = [Certificate(0.0, 2.0, 0.05, "forward"), Certificate(1e-8, eps_lo, 0.05, "forward")]
    text = report.disagreement
    assert (text is not None) == disagree
    if disagree:
        assert f"eps_lo = {eps_lo:.4g} at delta=1e-08" in text and "2,500 validation rows" in text
        assert f"note: {text}" in report.table() and f"note: {text}" in repr(report)
        assert "Note: the verdict" in report.to_html()
    else:
        assert "note:" not in report.table() and "Note: the verdict" not in report.to_html()


def _claim_check(source: str) -> ClaimCheck:
    """A claimed curve at 1.5 x the estimate of `make_report`, refuted nowhere."""
    report = make_report()
    claimed = 1.5 * report.delta
    return ClaimCheck("not refuted", source, 0.05, 0.95, EPS, claimed, report.delta_lower, report.delta,
                      np.zeros(EPS.size, bool), None, None)


def test_user_strings_are_drawn_and_written_as_they_are_never_as_markup(tmp_path):
    # A data path, plug-in name or claim file with $...$ was parsed as mathtext: `$\bad$` made the PNG
    # fail after the audit. Every user string must come out literally, in the plot and in the HTML.
    name = r"cost$_{5}$ $\bad$ <b>x</b>"
    report = make_report(mechanism=name)
    report.claim = _claim_check(r"claims/$\eps$.csv")
    figure = report.plot(tmp_path / "spectrum.png")  # ValueError (mathtext) before the fix
    assert (tmp_path / "spectrum.png").read_bytes()[:4] == b"\x89PNG"
    title = figure.get_suptitle()
    assert title == f"{name}: privacy spectrum (20000 samples per side)"
    texts = [figure._suptitle, *figure.legends[0].get_texts()]
    assert r"claimed: claims/$\eps$.csv" in legend_labels(figure)
    assert all(not t.get_parse_math() and not t.get_usetex() for t in texts)
    page = report.to_html(title=name)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page and r"$\bad$" in page


def _displayed_px(figure, points: float) -> float:
    """Height in CSS pixels of a `points` text of `figure` in report.html on a 1280 px wide screen:
    the PNG (html.DPI) is shown at most html.PAGE_WIDTH_PX wide."""
    width = figure.get_size_inches()[0] * html.DPI
    return points / 72 * html.DPI * min(1.0, html.PAGE_WIDTH_PX / width)


@pytest.mark.parametrize("tradeoff", [False, True])
def test_every_text_of_the_plot_is_legible_in_report_html_at_1280_px(tradeoff):
    assert html.PAGE_WIDTH_PX + 32 <= 1280  # the page's content and its 1rem paddings fit a 1280 px screen
    report = make_report()
    if tradeoff:
        a = np.linspace(0, 1, 11)
        report.gdp = GDPCertificate(0.8, 0.05, "forward", 0.5, 0.2, tradeoff={
            "type_one": a, "beta": 1 - a, "beta_lower": 1 - a, "beta_upper": 1 - a, "alpha": 0.05})
    figure = report.plot()
    figure.canvas.draw()  # tick labels exist once drawn
    ticks = [t for axis in figure.axes for t in axis.get_xticklabels() + axis.get_yticklabels()]
    texts = [t for t in figure.findobj(matplotlib.text.Text) + ticks if t.get_visible() and t.get_text().strip()]
    assert len(figure.axes) == (3 if tradeoff else 2) and len(ticks) > 20
    smallest = min(texts, key=lambda t: t.get_fontsize())
    assert _displayed_px(figure, smallest.get_fontsize()) >= 10, smallest.get_text()
    if tradeoff:  # the trade-off panel says what it shows
        assert "tests of M(D) vs M(D')" in figure.axes[2].get_title()
        assert "trade-off view: each point is a test" in markup.unescape(report.to_html(png=html.render_png(figure)))


@pytest.mark.parametrize("tradeoff", [False, True])
def test_the_fixed_margins_hold_every_text_without_overlaps(tradeoff):
    # the layout is fixed inches, not measured (constrained layout cost 1.2 s): the drawn texts must still
    # fit, with the longest legend of make_report (claimed point, hollow points, both certificates)
    report = make_report()
    report.certificates = [Certificate(0.0, 0.9, 0.05, "forward", 0.1), Certificate(1e-5, 0.8, 0.05, "forward", 0.1)]
    if tradeoff:
        a = np.linspace(0, 1, 11)
        report.gdp = GDPCertificate(0.8, 0.05, "forward", 0.5, 0.2, tradeoff={
            "type_one": a, "beta": 1 - a, "beta_lower": 1 - a, "beta_upper": 1 - a, "alpha": 0.05})
    figure = report.plot(title="als on flights:20000 (remove row 7008, 1,000,000 samples per side)")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legend, title = figure.legends[0].get_window_extent(renderer), figure._suptitle.get_window_extent(renderer)
    panels = [axis.get_tightbbox(renderer) for axis in figure.axes]  # with tick labels, axis labels, titles
    width, height = figure.bbox.width, figure.bbox.height
    assert len(legend_labels(figure)) >= 7 and 0 <= legend.y0 and legend.y1 < min(panel.y0 for panel in panels)
    assert max(panel.y1 for panel in panels) < title.y0 and title.y1 <= height
    assert 0 <= min(panel.x0 for panel in panels) and max(panel.x1 for panel in panels) <= width
    assert all(left.x1 < right.x0 for left, right in zip(panels, panels[1:]))


def test_a_claimed_delta_of_0_is_drawn_on_the_bottom_edge_of_the_log_panel():
    report = make_report(claimed_delta=0.0)
    figure = report.plot()
    log = figure.axes[1]
    (star,) = [line for line in log.get_lines() if line.get_label().startswith("claimed (1, 0)")]
    assert star.get_ydata()[0] == log.get_ylim()[0] and not star.get_clip_on()
    assert any("claimed delta = 0" in t.get_text() for t in log.texts)
    assert "claimed (1, 0): inconclusive" in legend_labels(figure)
    assert "star on its bottom edge" in report.to_html(png=html.render_png(figure))


def test_the_table_shows_every_row_or_says_which_it_skipped():
    report = make_report()
    lines = report.table().splitlines()
    assert sum(line.split()[0] in {f"{e:g}" for e in EPS} for line in lines[1:EPS.size + 1]) == EPS.size
    assert "grid rows shown" not in report.table()
    eps = np.linspace(0, 10, 1001)  # 1,001 rows: a selection, which keeps the claimed eps = 1.37
    long = AuditReport(estimate=Curve(eps, eps, eps), lower=Curve(eps, eps, eps), upper=Curve(eps, eps, eps),
                       floor=np.zeros(eps.size), verdict=dataclasses.replace(report.verdict, eps=1.37))
    text = long.table()
    assert "  1.37 " in text and "42 of 1,001 grid rows shown (one in 25 from the first, eps = 1.37)" in text
    assert "every row is in report.to_frame()" in text
    assert "grid rows shown" in long._repr_html_()


@pytest.mark.parametrize("eps_lo, says", [(1.96, "about 2x the claimed 1"), (0.9, None)])
def test_a_violation_is_also_said_in_eps(eps_lo, says):
    eps = np.array([0.0, 1.0, 2.0])
    zero = Curve(eps, np.zeros(3), np.zeros(3))
    v = Verdict("violation", 1.0, 0.0, 1 - 3e-9, 0.37, 0.39, 8e-4, "reverse", 0.05, p_value=3e-9)
    report = AuditReport(estimate=zero, lower=zero, upper=zero, floor=np.full(3, 1e-3), verdict=v,
                         certificates=[Certificate(0.0, eps_lo, 0.05, "reverse")], info={"alpha": 0.05})
    text = report.verdict_text
    assert text.startswith(str(v)) and text in report.table() and text in markup.unescape(report._repr_html_())
    if says:
        assert (f"In eps: the mechanism's eps at delta=0 is at least 1.96, {says} (the certified eps_lo, a separate "
                "test at 95% confidence)") in text
    else:  # eps_lo does not exceed the claim: no eps sentence, the disagreement note instead
        assert "In eps" not in text and report.disagreement is not None
def test_a_failed_write_leaves_the_earlier_file_whole(tmp_path, monkeypatch):
    # a disk that fills up while the file is written (ENOSPC at the flush): before, report.json was left
    # truncated; now the earlier file stays as it was and no temporary file remains
    import errno
    import os

    from ndis.core import files

    path = tmp_path / "report.json"
    report = make_report()
    report.to_json(path)
    earlier = path.read_text()
    assert json.loads(earlier)["status"] == "complete"

    def full(descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        make_report(claimed_delta=1e-6).to_json(path)
    with pytest.raises(OSError, match="No space left"):
        report.plot(tmp_path / "spectrum.png")
    assert path.read_text() == earlier and sorted(os.listdir(tmp_path)) == ["report.json"]


def test_a_partial_report_is_marked_and_not_read_as_a_complete_one(tmp_path):
    from ndis.auditor.reporting.report import partial_report

    phases = [{"phase": "training samples on D", "unit": "samples", "count": 1000, "seconds": 0.5}]
    partial = partial_report(phases, {"scorer": "quadratic/flatten", "n_samples": np.int64(4000)},
                             "during held-out samples on D after 200 of 2,000 samples")
    assert partial["status"] == "partial" and partial["info"]["n_samples"] == 4000
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    with pytest.raises(ValueError, match="a partial report of an interrupted audit \\(during held-out samples"):
        AuditReport.from_json(tmp_path / "partial.json")
    assert AuditReport.from_json(make_report().to_json()).info == make_report().info


def test_the_trade_off_panel_draws_the_exact_curves_trade_off():
    # the exact curve is mu = 1 Gaussian DP: its trade-off from the 41 grid values is the envelope of
    # those (eps, delta) claims (Dong, Roth & Su 2022, Prop. 2.12), never above G_1 and, for type I
    # errors in [0.1, 1], within 2e-4 of it (measured 1.1e-4; a = 0 needs eps beyond the grid's 2)
    report = make_report("exact law")
    a = np.linspace(0, 1, 11)
    report.gdp = GDPCertificate(0.8, 0.05, "forward", 0.5, 0.2, tradeoff={
        "type_one": a, "beta": 1 - a, "beta_lower": 1 - a, "beta_upper": 1 - a, "alpha": 0.05})
    panel = report.plot().axes[2]
    (line,) = [line for line in panel.get_lines() if line.get_label() == "exact"]  # as on the delta panels
    drawn, g1 = np.asarray(line.get_ydata()), gaussian_tradeoff(a, 1.0)
    assert np.all(drawn <= g1 + 1e-12) and np.all(np.abs(drawn - g1)[1:] <= 2e-4)


def _with_tradeoff(report: AuditReport) -> AuditReport:
    """`report` with a trade-off view (the plot's third panel)."""
    a = np.linspace(0, 1, 11)
    report.gdp = GDPCertificate(0.8, 0.05, "forward", 0.5, 0.2, tradeoff={
        "type_one": a, "beta": np.maximum(1 - 1.6 * a, 0), "beta_lower": np.maximum(1 - 1.8 * a, 0),
        "beta_upper": np.minimum(1 - 1.3 * a + 0.05, 1), "alpha": 0.05})
    return report


@pytest.mark.parametrize("tradeoff, source", [(False, "claims.csv"), (True, "claims.csv"),
                                              (True, "a claimed curve from a long path/" + "x" * 60 + ".csv")])
def test_no_legend_covers_a_panel(tradeoff, source):
    # the trade-off panel had its legend in its upper right corner, over the curves near type I error 0 and
    # the diagonal: every legend now lies outside every panel's data area, and inside the figure (a long
    # claim source takes fewer columns)
    report = make_report()
    report.claim = _claim_check(source)
    report.certificates = [Certificate(0.0, 0.9, 0.05, "forward", 0.1), Certificate(1e-5, 0.8, 0.05, "forward", 0.1)]
    figure = (_with_tradeoff(report) if tradeoff else report).plot()
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legends = figure.legends + [axis.get_legend() for axis in figure.axes if axis.get_legend() is not None]
    assert len(legends) == 1 and len(figure.axes) == (3 if tradeoff else 2)
    box = legends[0].get_window_extent(renderer)
    assert not any(box.overlaps(axis.bbox) for axis in figure.axes)
    assert 0 <= box.x0 and box.x1 <= figure.bbox.width
    labels = legend_labels(figure)
    assert len(labels) == len(set(labels)) and ("perfect privacy" in labels) == tradeoff


def test_the_page_names_the_bands_numbers_and_the_chosen_events_apart():
    # at the claimed eps = 1 the table's band (estimate 0.0383, floor 0.033) and the verdict's chosen event
    # (estimate 3.2e-4, floor 2.1e-4) differ, and a certificate's chosen event certified nothing beside a
    # positive band lower bound at eps = 0: each number is named for its kind, and one sentence says which
    # is which, in the text table (the CLI's summary) and on the page
    report = make_report()
    report.verdict = Verdict("no violation found", 1.0, 1e-3, 0.95, 0.0, 3.2e-4, 2.1e-4, "forward", 0.05,
                             estimate_se=1e-4, p_value=0.6)
    report.certificates = [Certificate(0.0, 0.0, 0.05, "forward", 0.1), Certificate(1e-5, 0.8, 0.05, "reverse", 0.1)]
    assert report.delta_lower[0] > 0 and report.floor[EPS == 1.0][0] != report.verdict.floor
    tiny = html.render_png(Figure(figsize=(0.1, 0.1)))  # any PNG: the page's texts are tested
    text, page = report.table(), markup.unescape(report.to_html(png=tiny))
    assert text.splitlines()[0].split() == ["eps", "estimate", "band", "lower", "band", "floor", "theory"]
    assert all(f'<th scope="col">{name}</th>' in page for name in ("estimate", "band lower", "band floor"))
    for shown in (text, page):
        assert shown.count(report.which_is_which) == 1 and "chosen event's bound, estimate and floor" in shown
        assert "the chosen event's 95% lower bound on delta(1) is 0, not above the claimed 0.001" in shown
        assert "chosen event's estimate 0.00032 +- 0.0001" in shown and "chosen event's floor 0.00021" in shown
        assert "held-out estimate" not in shown and "detectable floor" not in shown   # the names of both kinds
    assert "the chosen event at eps = 1: 95% lower bound 0, estimate 0.00032, floor 0.00021" in page
    assert "eps_lo = 0 at delta=0: its chosen event refutes no (eps, 0)-DP with eps >= 0" in text
    assert "An eps_lo of 0 says that its chosen event refutes nothing, whatever the band shows." in page
