"""An audit report as HTML: `page` is report.html, one self-contained HTML5 file (the plot inlined
as a PNG data URI, inline CSS, no scripts, nothing fetched from the network); `summary` is the
fragment a notebook shows for a report (no plot)."""

from __future__ import annotations

import base64
import html
import io
import math
import struct
from typing import TYPE_CHECKING

import numpy as np

from ...core.curve import table_rows
from ..statistics.verdict import SUSPICION_LEVEL

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The width of the page's content in CSS pixels (72rem at the browsers' default 16 px), the widest
#: the plot is shown: on a 1280 px screen the page is this wide, and `AuditReport.plot` sizes its
#: texts for it.
PAGE_WIDTH_PX = 1152

_STYLE = """
body { font-family: system-ui, "Segoe UI", "DejaVu Sans", Arial, sans-serif; color: #1d1d1f;
       max-width: PAGE_WIDTH_PXpx; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.15rem; margin-top: 1.6rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 0.15rem 0.7rem; text-align: right; border-bottom: 1px solid #eee; }
th { background: #f4f4f6; }
td.below { color: #888; font-style: italic; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; }
.verdict { padding: 0.6rem 0.9rem; border-left: 0.4rem solid; margin: 0.8rem 0; }
.violation { border-color: #c0392b; background: #fbeceb; }
.no-violation-found { border-color: #5a6b7d; background: #eef1f4; }
.inconclusive { border-color: #b7950b; background: #fdf7e3; }
.refuted { border-color: #c0392b; background: #fbeceb; }
.not-refuted { border-color: #5a6b7d; background: #eef1f4; }
.note { color: #555; font-size: 0.9rem; }
""".replace("PAGE_WIDTH_PX", str(PAGE_WIDTH_PX))


def _number(value, digits: int = 4) -> str:
    """`value` to `digits` significant digits; a dash for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "&ndash;"
    return f"{float(value):.{digits}g}"


def _text(value) -> str:
    return html.escape(str(value))


def _verdict(report) -> str:
    """The verdict box (`AuditReport.verdict_text`), or a line saying no claim was tested."""
    v = report.verdict
    if v is None:
        return ('<p class="note">No claimed (eps, delta) was tested (give <code>claimed=</code> or '
                "<code>--claimed</code>).</p>")
    css = v.label.replace(" ", "-")  # "no violation found" must not carry the class "violation"
    label = v.label + (f", suspicious at level {SUSPICION_LEVEL:g}" if v.suspicious else "")
    return (f'<div class="verdict {_text(css)}"><strong>Verdict: {_text(label)}</strong> (a test of '
            f"delta({v.eps:g}) &le; {v.delta:g} at level {v.alpha:g})<br>{_text(report.verdict_text)}<br>"
            f'<span class="note">the chosen event at eps = {v.eps:g}: {1 - v.alpha:.0%} lower bound '
            f"{_number(v.lower_bound)}, estimate {_number(v.estimate)}, floor {_number(v.floor, 3)}, direction "
            f"{_text(v.direction)}. The confidence belongs to the lower bound on delta, not to the claim: a black-box "
            "audit never proves privacy.</span></div>")


def _certificates(report) -> str:
    """The certified epsilons (`auditor.statistics.certify`), one row per delta."""
    if not report.certificates:
        return '<p class="note">No certified epsilon (it is computed by method="threshold").</p>'
    note = report.disagreement
    body = "".join(f"<tr><td>{c.delta:g}</td><td>{_number(c.eps_lo)}</td><td>{_text(c.direction or '-')}</td>"
                   f"<td>{1 - c.alpha:.0%}</td></tr>" for c in report.certificates)
    nothing = (" An eps_lo of 0 says that its chosen event refutes nothing, whatever the band shows."
               if any(c.eps_lo <= 0 for c in report.certificates) else "")
    return ('<p>The mechanism is <strong>not</strong> (eps, delta)-DP for any eps &lt; eps_lo (each row a separate '
            "test of its chosen event at its confidence: one event chosen on validation data, exact Clopper-Pearson "
            f"bounds on held-out counts).{nothing}</p><table><thead><tr><th scope=\"col\">delta</th>"
            '<th scope="col">eps_lo</th>'
            f'<th scope="col">direction</th><th scope="col">confidence</th></tr></thead><tbody>{body}</tbody></table>'
            + (f'<p class="note">Note: {_text(note)}.</p>' if note else ""))


def _claim(report) -> str:
    """The claimed curve's check (`auditor.statistics.claims`), or nothing when no curve was claimed."""
    c = report.claim
    if c is None:
        return ""
    css = c.label.replace(" ", "-")  # "not refuted" must not carry the class "refuted"
    excess = (f"largest excess of the lower bound over the claim: {_number(c.excess, 3)} at eps = {c.eps_excess:g}. "
              if c.label == "refuted" else "")
    return (f'<h2>Claimed curve</h2><div class="verdict {_text(css)}"><strong>Claimed curve: {_text(c.label)}'
            f"</strong> (confidence {c.confidence:.0%}, simultaneous over the grid)<br>{_text(c)}</div>"
            f'<p class="note">{excess}Refuted where the lower bound, which holds at every eps of the grid and in '
            "both directions at once, exceeds the claim; the shaded gap between the claim and the point estimate "
            "on the plot is a hint that the claim may be loose, not a proof (the estimate measures only the "
            "trained score). Not refuted is never a proof of privacy.</p>")


def _gdp(report) -> str:
    """The certified Gaussian-DP parameter (`auditor.statistics.gdp`)."""
    g = report.gdp
    if g is None:
        return ""
    return (f"<h2>Gaussian DP</h2><p>{_text(g)}.</p><p class=\"note\">mu_lo = Phi^-1(P_lo) - Phi^-1(Q_hi) for one "
            "event chosen on validation data, with exact Clopper-Pearson bounds on held-out counts "
            f"(P_lo = {_number(g.p_lower)}, Q_hi = {_number(g.q_upper)}). The trade-off panel of the plot shows the "
            "type I and type II errors of the score's tests with a DKW band; a claimed trade-off curve above the "
            "band is refuted by the score's tests.</p>")


def _table(report) -> str:
    """The curves at every grid row (`ndis.core.curve.table_rows`: a long grid's skipped rows are
    named below the table); estimates below the band floor in grey italics."""
    keep = () if report.verdict is None else (report.verdict.eps,)
    rows, skipped = table_rows(report.eps, keep, where="spectrum.csv, report.json and report.to_frame()")
    names = ["eps", "estimate", "band lower", "band upper", "band floor"]
    if report.theory is not None:
        names.append(report.theory_label)
    if report.claim is not None:
        names += ["claimed", "refuted"]
    head = "".join(f'<th scope="col">{_text(name)}</th>' for name in names)
    body = []
    for i in rows:
        below = report.delta[i] < report.floor[i]
        cells = [f"{report.eps[i]:g}", _number(report.delta[i]), _number(report.delta_lower[i]),
                 _number(report.delta_upper[i]), _number(report.floor[i], 3)]
        if report.theory is not None:
            cells.append(_number(report.theory[i]))
        if report.claim is not None:
            cells += [_number(report.claim.claimed[i]), "yes" if report.claim.refuted[i] else "no"]
        tds = "".join(f'<td class="below">{c}</td>' if below and k == 1 else f"<td>{c}</td>"
                      for k, c in enumerate(cells))
        body.append(f"<tr>{tds}</tr>")
    note = f'<p class="note">{_text(skipped)}.</p>' if skipped else ""
    return f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{note}'


def _curve_note(report) -> str:
    """What the exact curve column is."""
    label = report.theory_label
    source = report.info.get("theory")
    if label is None:
        why = f" ({_text(source)})" if isinstance(source, str) and source.startswith("failed") else ""
        return f'<p class="note">No exact curve: the mechanism has no Gaussian output law{why}.</p>'
    meaning = {"exact": "the exact privacy curve of the mechanism's Gaussian output law",
               "given": "the curve given with the mechanism (<code>batched(f, exact=...)</code>)",
               "theory": "the reference curve stored with the report"}.get(
        label, "the curve of the asymptotic normal law (a limit, not the exact law at this size)")
    return f'<p class="note">The <strong>{_text(label)}</strong> column and curve: {meaning}.</p>'


def _plain_text(value) -> str:
    """A dict as `key=value, ...`; anything else as str."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def _provenance(report) -> str:
    """Command line, data, neighbour, sizes, seed, timings and versions, as a definition list."""
    info = report.info
    items = {"command": info.get("command"), "mechanism": report.mechanism,
             "kind": info.get("kind"), "parameters": info.get("params"),
             "data": info.get("data"), "data_prime": info.get("data_prime")}
    neighbour, search = report.neighbor, report.pair_search
    if neighbour:
        items["neighbour"] = _neighbour(neighbour)
    items.update({"samples per side": _samples(report.n_samples, search), "split": report.sizes,
                  "method": report.method, "scorer": report.scorer, "alpha": report.alpha})
    if search is not None:
        items["why this pair"] = search.get("reason")
    seed = report.seed
    if report.seed_line:
        items["seed"] = report.seed_line
    elif seed is not None:
        items["seed entropy"], items["seed spawn key"] = seed.get("entropy"), seed.get("spawn_key") or None
    if info.get("backend") is not None:
        items["sampling"] = f"{info.get('backend')}, n_jobs={info.get('n_jobs')}"
    items["exact curve source"] = info.get("theory")
    timings = report.timings
    items["timings"] = ", ".join(f"{k} {v:.2f} s" for k, v in timings.items() if isinstance(v, (int, float))) or None
    versions = info.get("versions") or {}
    items["versions"] = ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None) or None
    rows = "".join(f"<dt>{_text(k)}</dt><dd>{_text(_plain_text(v))}</dd>" for k, v in items.items() if v is not None)
    return f"<dl>{rows}</dl>"


def _neighbour(neighbour: dict) -> str:
    """The neighbouring row, or the pair the pair search found, or a D' given without a relation."""
    relation, row, how = neighbour.get("relation"), neighbour.get("row"), neighbour.get("how")
    if row is not None:
        return f"{relation} row {row} ({how})"
    if "D" in neighbour:
        return f"{how}: D = {neighbour['D']}, D' = {neighbour['D_prime']}"
    return f"D' {how}, " + (f"a neighbour under {relation}" if relation else "no neighbour relation checked")


def _samples(n, search) -> str | int | None:
    """The audit's samples per side; after a pair search, also what the search spent besides them."""
    if not (isinstance(search, dict) and isinstance(n, int)):
        return n
    confirmations = (f", {search['n_confirm']} confirmations x {search['samples_per_confirmation']:,}"
                     if search.get("n_confirm") else "")
    return (f"{n:,} in the audit of the pair found, independent of the {search['pilot_samples'] // 2:,} per side "
            f"the pair search spent ({search['n_trials']} pilots x {search['samples_per_pilot']:,}{confirmations})")


DPI = 120  # of spectrum.png and of the page's image, which are the same bytes when `ndis audit` writes both


def render_png(figure: Figure) -> bytes:
    """The figure as PNG bytes at `DPI`, deflated at level 3 (the default 6 compresses the README job's
    plot more slowly for a file about 2% smaller), its glyphs not hinted (FreeType's autohinter ran
    for every glyph drawn: 0.02-0.1 s of the README job's plot).

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure, e.g. `AuditReport.plot()`; its own DPI is left as it is.

    Returns
    -------
    bytes
        The PNG file's bytes.
    """
    from matplotlib import rc_context

    buffer = io.BytesIO()
    with rc_context({"text.hinting": "none"}):
        figure.savefig(buffer, format="png", dpi=DPI, pil_kwargs={"compress_level": 3})
    return buffer.getvalue()


def _plot_png(report, title, png: bytes | None = None) -> tuple[str, int, int]:
    """`png` (report.plot(title=title) rendered by `render_png`, drawn here when not given) as base64,
    with its width and height in pixels (read from the PNG's header chunk)."""
    png = png or render_png(report.plot(title=title))
    width, height = struct.unpack(">II", png[16:24])
    return base64.b64encode(png).decode("ascii"), width, height


def _heading(report, title) -> str:
    params = report.info.get("params")
    detail = f" ({_text(_plain_text(params))})" if params else ""
    return (f"<h1>{_text(title or report.title)}</h1>"
            f'<p class="note">Black-box audit of <strong>{_text(report.mechanism)}</strong>'
            f"{detail} with ndis: the estimate of delta(eps) from samples, its band and the band floor (the smallest "
            f"delta the sample size can certify).{' ' + _text(report.which_is_which) if report.which_is_which else ''}"
            "</p>")


def summary(report) -> str:
    """A notebook summary of `report`: heading, verdict, certificates and the table (no plot)."""
    return (f"<div>{_heading(report, None)}{_verdict(report)}{_claim(report)}{_certificates(report)}{_gdp(report)}"
            f"{_table(report)}{_curve_note(report)}</div>")


def page(report, title: str | None = None, png: bytes | None = None) -> str:
    """report.html: a complete HTML5 document for `report`, readable offline and without JavaScript;
    `png` is report.plot(title=title) rendered by `render_png`, when the caller has made it already."""
    heading = title or report.title
    hollow = (" Hollow points are estimates below the band floor (an audit of this size could not certify"
              " them)." if np.any(report.delta < report.floor) else "")
    alt = "privacy spectrum plot: estimate, band lower bound, band floor" + (
        f", {report.theory_label} curve" if report.theory_label else "") + (
        ", claimed curve" if report.claim is not None else "") + (
        ", trade-off view" if report.tradeoff is not None else "")
    png, width, height = _plot_png(report, title, png)
    zero = (" (a claimed delta of 0, which a log scale cannot show, is the star on its bottom edge)"
            if report.verdict is not None and report.verdict.delta <= 0 else "")
    panels = f"Left: delta(eps) on a linear scale; {{}}: on a log scale{zero}."
    if report.tradeoff is not None:
        panels = panels.format("middle") + (
            " Right: the trade-off view: each point is a test telling M(D) from M(D'), placed by its type I and "
            "type II errors; the lower the curve, the less private the mechanism (the diagonal is perfect privacy)"
            + ("; the blue curve is the exact curve's, from its values on the eps grid." if report.theory is not None
               else "."))
    else:
        panels = panels.format("right")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_text(heading)}</title>
<style>{_STYLE}</style>
</head>
<body>
<main>
{_heading(report, title)}
<h2>Verdict</h2>
{_verdict(report)}
{_claim(report)}
<h2>Certified epsilon</h2>
{_certificates(report)}
{_gdp(report)}
<h2>Privacy spectrum</h2>
<figure><img src="data:image/png;base64,{png}" alt="{_text(alt)}" width="{width}" height="{height}">
<figcaption class="note">{panels}{hollow}</figcaption></figure>
{_curve_note(report)}
{_table(report)}
<h2>Provenance</h2>
{_provenance(report)}
</main>
</body>
</html>
"""
