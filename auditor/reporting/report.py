"""AuditReport: the curves, bounds, exact curve and verdict of an audit; JSON, CSV (frame) and plot.

Every file is written whole or not at all (`core.files.write_atomic`). The JSON of a complete
report has "status": "complete"; an interrupted audit leaves a partial report instead
(`partial_report`, "status": "partial"): the phases it completed and what they found.
"""

from __future__ import annotations

import csv
import io
import json
import math
import pathlib
import platform
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...core.curve import Curve, table_rows
from ...core.files import write_atomic
from ..statistics.certify import Certificate, certify
from ..statistics.claims import ClaimCheck, tabulated
from ..statistics.gdp import GDPCertificate, gaussian_tradeoff
from ..statistics.spectrum import Evidence
from ..statistics.verdict import Verdict
from . import html
from .records import NeighbourRecord, PairSearchRecord, SamplesNeeded, ScreenRecord, SeedRecord, SequentialRecord, Sizes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The curve columns of the JSON and CSV formats, in order: name -> (Curve of the report, part).
#: The typed fields of what an audit did (`auditor.reporting.records`), saved at the top level of report.json.
TYPED = ("mechanism", "alpha", "method", "seed", "n_samples", "samples_used", "sizes", "scorer", "neighbor", "screen",
         "timings", "samples_needed", "sequential", "pair_search")
_COLUMNS = {"delta": ("estimate", "delta"), "delta_lower": ("lower", "delta"), "delta_upper": ("upper", "delta"),
            "delta_forward": ("estimate", "forward"), "delta_reverse": ("estimate", "reverse"),
            "lower_forward": ("lower", "forward"), "lower_reverse": ("lower", "reverse"),
            "upper_forward": ("upper", "forward"), "upper_reverse": ("upper", "reverse")}
#: The exact-curve columns (null, or absent from the CSV, when there is no exact curve).
_EXACT_COLUMNS = {"theory": ("exact", "delta"), "theory_forward": ("exact", "forward"),
                  "theory_reverse": ("exact", "reverse")}


def _part(curve: str, part: str) -> property:
    """A read-only attribute: the `part` ("delta", "forward", "reverse") of the report's `curve`."""

    def get(self):
        value = getattr(self, curve)
        return None if value is None else getattr(value, part)

    return property(get, doc=f"`{curve}.{part}`")


def _literal(*texts):
    """Draw matplotlib texts as they are: no mathtext (a `$` in a path or name is a dollar sign), no TeX."""
    for text in texts:
        text.set_parse_math(False)
        text.set_usetex(False)


#: The figure's margins in inches: room for the tick labels and the axis label left of each panel,
#: below the panels (above the legend), for the title (and the trade-off panel's two-line title) above.
_LEFT, _RIGHT, _GAP, _BELOW, _ABOVE = 0.85, 0.2, 0.95, 0.7, 0.95


def _few_ticks(*axes):
    """At most five major ticks on every linear axis (matplotlib's default allows ten): each tick is
    a dozen artists and a text to lay out and draw (tick creation alone was a fifth of the README
    job's rendering time)."""
    from matplotlib.ticker import MaxNLocator

    for axis in axes:
        for side in (axis.xaxis, axis.yaxis):
            if side.get_scale() == "linear":
                side.set_major_locator(MaxNLocator(nbins=4))


def _legend_below(figure):
    """One legend for every panel, below them all, so that it never covers data: each label once (the
    exact and the claimed curve are drawn in the same style on every panel), in as many columns as fit
    the figure's width (4 beside a trade-off panel, else 3; fewer for long labels, e.g. a claim's source)."""
    handles = {}
    for axis in figure.axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    renderer = figure.canvas.get_renderer()
    for columns in range(4 if len(figure.axes) == 3 else 3, 0, -1):
        legend = figure.legend(handles.values(), handles.keys(), loc="lower center", bbox_to_anchor=(0.5, 0.01),
                               ncols=columns, fontsize=11)
        _literal(*legend.get_texts())
        if columns == 1 or legend.get_window_extent(renderer).width <= figure.bbox.width:
            return legend
        legend.remove()


def _fixed_layout(figure, legend, panels: int) -> None:
    """Place the panels with margins of fixed inches (`_LEFT`, ...) above the legend, whose height is
    measured: matplotlib's constrained layout measured every tick label instead, most of the README
    job's plot time."""
    width, height = figure.get_size_inches()
    legend_height = legend.get_window_extent(figure.canvas.get_renderer()).height / figure.dpi
    panel = (width - _LEFT - _RIGHT - (panels - 1) * _GAP) / panels
    figure.subplots_adjust(left=_LEFT / width, right=1 - _RIGHT / width, wspace=_GAP / panel,
                           bottom=(0.01 * height + legend_height + _BELOW) / height, top=1 - _ABOVE / height)


def versions() -> dict:
    """Versions of Python and of the numerical libraries an audit depends on."""
    import importlib.metadata as metadata

    found = {"python": platform.python_version()}
    for package in ("ndis", "numpy", "scipy", "scikit-learn", "torch", "joblib", "dask", "distributed"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def _plain(value):
    """JSON-ready copy: arrays to lists, numpy scalars to Python, non-finite floats to None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


def partial_report(phases: list, info: dict, interrupted: str | None = None) -> dict:
    """The JSON-ready partial report of an interrupted audit: "status": "partial", the phases completed
    (name, samples or fits, seconds), what they found (the audit's `info` so far: the neighbour and
    screen, the output shape, the scorer chosen and its validation losses, ...) and, when given,
    what was under way (`interrupted`)."""
    return _plain({"status": "partial", "interrupted": interrupted, "phases_completed": phases, "info": info})


@dataclass(eq=False)
class AuditReport:
    """Result of `auditor.audit`.

    `estimate` is delta-hat in both directions on the eps grid (`delta` = max(delta_forward,
    delta_reverse)); `lower` the lower bound holding simultaneously over the grid and both
    directions with probability >= 1 - alpha (`delta_lower`); `upper` bounds (at level alpha) the
    delta of the trained score's level sets, not the mechanism's (`delta_upper`); `floor` is the
    smallest delta the sample size can certify (see `auditor.statistics.bounds.detectable_floor`); `exact` the
    exact curve when the mechanism has an output law (or `exact=` was given), else None (`theory`,
    `theory_forward`, `theory_reverse`); `verdict` the test of `claimed`, else None. Curves are
    `ndis.core.curve.Curve` objects. `certificates` are the certified epsilons
    (`auditor.statistics.certify.Certificate`, one per delta; `eps_lo(delta)`), each at confidence 1 - alpha.
    `evidence` (not saved in JSON) is the validation ROC and held-out counts of a threshold audit
    (`auditor.statistics.spectrum.Evidence`), from which `eps_lo` certifies any other delta after the audit.
    `claim` is the check of a claimed curve (`auditor.statistics.claims.ClaimCheck`), else None; `gdp` the
    certified Gaussian-DP parameter mu_lo with the trade-off view (`auditor.statistics.gdp.GDPCertificate`).

    What the audit did (`auditor.reporting.records`): the `mechanism`'s name, the level `alpha`, the
    `method`, the root `seed` (`audit(..., seed=report.seed["entropy"])` re-runs it), the budget
    `n_samples` per side and the `samples_used` (fewer when a sequential audit stopped early), the
    `sizes` of the split, the `scorer` chosen, how D' was chosen (`neighbor`, and the black-box
    `screen`), the wall time of each phase in seconds (`timings`, in the order they ran, and the
    `total`), the samples a claim's delta would need to be detectable (`samples_needed`), and the
    `sequential` audit's or the `pair_search`'s record. `info` holds the extras (`TYPED` are the
    typed fields, saved at the top level of report.json).
    """

    estimate: Curve
    lower: Curve
    upper: Curve
    floor: np.ndarray
    exact: Curve | None = None
    verdict: Verdict | None = None
    certificates: list[Certificate] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    evidence: Evidence | None = field(default=None, repr=False)
    claim: ClaimCheck | None = None
    gdp: GDPCertificate | None = None
    mechanism: str = "mechanism"
    alpha: float = 0.05
    method: str = "threshold"
    seed: SeedRecord | None = None
    n_samples: int | None = None
    samples_used: int | None = None
    sizes: Sizes | None = None
    scorer: str | None = None
    neighbor: NeighbourRecord | None = None
    screen: ScreenRecord | None = None
    timings: dict[str, float] = field(default_factory=dict)
    samples_needed: SamplesNeeded | None = None
    sequential: SequentialRecord | None = None
    pair_search: PairSearchRecord | None = None

    @property
    def eps(self) -> np.ndarray:
        return self.estimate.eps

    delta, delta_lower, delta_upper = _part("estimate", "delta"), _part("lower", "delta"), _part("upper", "delta")
    delta_forward, delta_reverse = _part("estimate", "forward"), _part("estimate", "reverse")
    lower_forward, lower_reverse = _part("lower", "forward"), _part("lower", "reverse")
    upper_forward, upper_reverse = _part("upper", "forward"), _part("upper", "reverse")
    theory, theory_forward, theory_reverse = _part("exact", "delta"), _part("exact", "forward"), _part("exact", "reverse")

    def eps_lo(self, delta: float = 0.0) -> float:
        """The certified epsilon at `delta`: the mechanism is not (eps, delta)-DP for any eps < eps_lo,
        at confidence 1 - alpha (`auditor.statistics.certify`). The audit certifies 0, 1e-5 and the claimed
        delta; any other delta is certified here from the audit's `evidence` (a separate statement
        at 1 - alpha: k of them hold together at 1 - k alpha), which a report read from JSON lacks."""
        for certificate in self.certificates:
            if certificate.delta == delta:
                return certificate.eps_lo
        if self.evidence is not None:
            e = self.evidence
            return certify(e.roc_valid, e.held, delta, self.alpha, n_select=e.n_valid, seed=e.seed).eps_lo
        known = ", ".join(f"{c.delta:g}" for c in self.certificates) or "none (method='eureka')"
        raise ValueError(f"no certified epsilon at delta={delta:g}; this report certified it at delta = {known} "
                         "(other deltas need the audit's evidence, which is not saved in JSON)")

    @property
    def disagreement(self) -> str | None:
        """A sentence when the verdict and the certified eps_lo at the claimed delta disagree about the
        claimed eps (a violation beside eps_lo <= eps0, or none beside eps_lo > eps0), else None. They
        are two tests, each at 1 - alpha on its own event chosen on the validation split: each holds
        alone, not both read together, and with few validation rows against many held out the two
        choices can differ."""
        v, certificate = self.verdict, self._claim_certificate()
        if certificate is None or (certificate.eps_lo > v.eps) == (v.label == "violation"):
            return None
        rows = self.sizes["validation"] if self.sizes else None
        on = f" on {rows:,} validation rows per side" if rows else ""
        return (f"the verdict ({v.label}) and eps_lo = {certificate.eps_lo:.4g} at delta={v.delta:g} disagree about "
                f"eps={v.eps:g}: each is a separate test at {1 - v.alpha:.0%} on its own event chosen{on}, valid "
                f"alone but not both together; more validation rows (a larger max_train) steady the choices")

    def _claim_certificate(self) -> Certificate | None:
        """The certified eps_lo at the verdict's claimed delta, if any."""
        v = self.verdict
        return next((c for c in self.certificates if v is not None and c.delta == v.delta), None)

    @property
    def verdict_text(self) -> str | None:
        """The verdict (`Verdict.__str__`), and for a violation what it means in eps: the certified
        eps_lo at the claimed delta as a multiple of the claimed eps. The verdict tests delta(eps0) and
        eps_lo is a second test, of every eps < eps_lo, at the same level: each holds at 1 - alpha on
        its own (both together at 1 - 2 alpha). None without a claim."""
        v, certificate = self.verdict, self._claim_certificate()
        if v is None:
            return None
        text = str(v)
        if v == "violation" and certificate is not None and certificate.eps_lo > v.eps:
            times = f", about {certificate.eps_lo / v.eps:.2g}x the claimed {v.eps:g}" if v.eps > 0 else ""
            text += (f". In eps: the mechanism's eps at delta={v.delta:g} is at least {certificate.eps_lo:.3g}{times} "
                     f"(the certified eps_lo, a separate test at {1 - certificate.alpha:.0%} confidence)")
        return text

    @property
    def which_is_which(self) -> str | None:
        """The one sentence that tells the band's numbers (table, plot) from the chosen events' (verdict,
        eps_lo), which differ at the same eps: the band's estimate is the sweep's maximum over thresholds,
        its lower bound holds at every eps of the grid at once, its floor is at that simultaneous level;
        the verdict and each eps_lo test one event chosen on validation data, each at 1 - alpha alone.
        None when the report has neither a verdict nor an eps_lo."""
        if self.verdict is None and not self.certificates:
            return None
        level = f"{1 - self.alpha:.0%}"
        return (f"The band's lower bound and floor hold at every eps of the grid at once ({level}); the verdict and "
                f"each eps_lo test one event chosen on validation data ({level} each), so the chosen event's bound, "
                "estimate and floor differ from the band's.")

    @property
    def seed_line(self) -> str | None:
        """How to re-run the audit (or the pair search that chose its pair) exactly; None when the
        audit ran on a spawned seed (e.g. inside another audit)."""
        search = self.pair_search
        seed, call = (search.get("seed"), "audit_search") if search is not None else (self.seed, "audit")
        if seed is None or seed.get("spawn_key"):
            return None
        entropy = seed["entropy"]
        return f"seed entropy {entropy}: {call}(..., seed={entropy}) or --seed {entropy} re-runs this audit exactly"

    def _columns(self) -> dict:
        """eps, the curve columns, the floor and the exact-curve columns, in the order of the formats."""
        return {"eps": self.eps, **{name: getattr(self, name) for name in _COLUMNS}, "floor": self.floor,
                **{name: getattr(self, name) for name in _EXACT_COLUMNS}}

    def to_dict(self) -> dict:
        out = self._columns()
        out["verdict"] = None if self.verdict is None else self.verdict.to_dict()
        out["eps_lo"] = [c.to_dict() for c in self.certificates]
        out["claim"] = None if self.claim is None else self.claim.to_dict()
        out["mu_lo"] = None if self.gdp is None else self.gdp.to_dict()
        out.update({name: getattr(self, name) for name in TYPED})
        out["info"] = self.info
        out["status"] = "complete"
        return _plain(out)

    def to_json(self, path=None) -> str:
        """The report as JSON text; also written to `path` when given."""
        text = json.dumps(self.to_dict(), indent=2, allow_nan=False)
        if path is not None:
            write_atomic(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, source) -> "AuditReport":
        """Read a report written by `to_json` (a path or the JSON text)."""
        text = str(source)
        if not text.lstrip().startswith("{"):
            text = pathlib.Path(source).read_text()
        data = json.loads(text)
        if data.get("status") == "partial":
            raise ValueError(f"a partial report of an interrupted audit ({data.get('interrupted') or 'no detail'}): it "
                             "has the phases completed and what they found, no curves; read it with json.load")
        eps = np.asarray(data["eps"], dtype=float)

        def curve(name, forward, reverse):
            if data.get(name) is None:
                return None
            if data.get(forward) is None or data.get(reverse) is None:  # one given curve for both directions
                return Curve(eps, data[name], data[name])
            return Curve(eps, data[forward], data[reverse])

        return cls(estimate=curve("delta", "delta_forward", "delta_reverse"),
                   lower=curve("delta_lower", "lower_forward", "lower_reverse"),
                   upper=curve("delta_upper", "upper_forward", "upper_reverse"),
                   exact=curve("theory", "theory_forward", "theory_reverse"), floor=np.asarray(data["floor"], dtype=float),
                   verdict=None if data.get("verdict") is None else Verdict(**data["verdict"]),
                   certificates=[Certificate(**c) for c in data.get("eps_lo") or []],
                   info=data.get("info", {}),
                   claim=None if data.get("claim") is None else ClaimCheck(**data["claim"]),
                   gdp=None if data.get("mu_lo") is None else GDPCertificate(**data["mu_lo"]),
                   **{name: data[name] for name in TYPED if name in data})

    def _table(self) -> dict:
        """The columns of `to_frame` and `to_csv`: those of `_columns` that are given, and the claim's."""
        columns = {name: values for name, values in self._columns().items() if values is not None}
        if self.claim is not None:
            columns.update(claimed=self.claim.claimed, claim_refuted=self.claim.refuted)
        return columns

    def to_frame(self):
        """A pandas DataFrame with one row per eps (`to_csv` writes the same table without pandas)."""
        import pandas as pd

        return pd.DataFrame(self._table())

    def to_csv(self, path=None) -> str:
        """The table of `to_frame` as CSV text (spectrum.csv), the same text as
        `to_frame().to_csv(index=False)` (empty for NaN) but written with the csv module, so that it does not
        import pandas (0.3 s); also written to `path`."""
        columns = self._table()
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for row in zip(*(np.asarray(values).tolist() for values in columns.values())):
            writer.writerow("" if isinstance(v, float) and math.isnan(v) else v for v in row)
        text = buffer.getvalue()
        if path is not None:
            write_atomic(path, text)
        return text

    def table(self, every: int | None = None) -> str:
        """A text table of eps, estimate, band lower, band floor, theory and claimed curve: every grid row,
        or for a grid longer than `ndis.core.curve.TABLE_ROWS` (or every `every`-th row when given) a
        selection with a line saying which rows it skipped (`ndis.core.curve.table_rows`); then the
        verdict, the claimed curve's check, the certificates, notes, a sequential audit's samples used
        and why it stopped, and the seed."""
        keep = () if self.verdict is None else (self.verdict.eps,)
        rows, skipped = table_rows(self.eps, keep, every, where="report.to_frame() and spectrum.csv")
        head = f"{'eps':>7} {'estimate':>11} {'band lower':>11} {'band floor':>10}" + (
            " {:>11}".format("theory") if self.theory is not None else "")
        head += " {:>11} {:>8}".format("claimed", "refuted") if self.claim is not None else ""
        lines = [head]
        for i in rows:
            line = f"{self.eps[i]:7.4g} {self.delta[i]:11.4g} {self.delta_lower[i]:11.4g} {self.floor[i]:10.3g}"
            if self.theory is not None:
                line += f" {self.theory[i]:11.4g}"
            if self.claim is not None:
                line += f" {self.claim.claimed[i]:11.4g} {'yes' if self.claim.refuted[i] else 'no':>8}"
            lines.append(line)
        if skipped:
            lines.append(skipped)
        if which := self.which_is_which:
            lines.append(which)
        if self.verdict is not None:
            lines.append(self.verdict_text)
        if self.claim is not None:
            lines.append(str(self.claim))
        lines += [str(c) for c in self.certificates]
        if note := self.disagreement:
            lines.append(f"note: {note}")
        if self.gdp is not None:
            lines.append(str(self.gdp))
        if sequential := self.sequential:
            lines.append(f"sequential: {sequential['samples_used']:,} of {sequential['budget']:,} samples per side "
                         f"used; {sequential['reason']}")
        if self.seed_line:
            lines.append(self.seed_line)
        return "\n".join(lines)

    @property
    def tradeoff(self) -> dict | None:
        """The score's trade-off view (`gdp.tradeoff`, the plot's third panel), or None."""
        return None if self.gdp is None else self.gdp.tradeoff

    @property
    def theory_label(self) -> str | None:
        """The exact curve's kind: "exact", "asymptotic (r -> inf)" (or "asymptotic" for a law without
        a sketch size r), "given", "theory" when unknown; None without an exact curve."""
        if self.exact is None:
            return None
        source = self.info.get("theory")
        if source == "asymptotic law":
            return "asymptotic (r -> inf)" if "r" in (self.info.get("params") or {}) else "asymptotic"
        return {"exact law": "exact", "given": "given"}.get(source, "theory")

    def plot(self, path: str | pathlib.Path | None = None, title: str | None = None) -> Figure:
        """Estimate with its band (lower bound to score upper band) and the exact curve, linear and
        log-delta panels (and the trade-off view when the report has one), one legend below them all
        (`_legend_below`: never over the data). Sized for report.html: at the page's width
        (`html.PAGE_WIDTH_PX`) every text is at least 10 px high. User strings (title, mechanism, claim
        source) are drawn as plain text, never as mathtext or TeX, and so are the log panel's tick
        labels. Made without pyplot, so the session's backend and figure list are left alone; its
        margins are fixed (`_fixed_layout`).

        Parameters
        ----------
        path : str or pathlib.Path, optional
            Where to save the figure as a PNG file (`html.render_png`); not saved when None.
        title : str, optional
            The figure's title; None for the report's own (`title`).

        Returns
        -------
        matplotlib.figure.Figure
            The figure, on matplotlib's Agg canvas.
        """
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        tradeoff = self.tradeoff
        figure = Figure(figsize=(14, 5.6) if tradeoff is not None else (11, 5.6))
        FigureCanvasAgg(figure)
        axes = figure.subplots(1, 3 if tradeoff is not None else 2)
        below = self.delta < self.floor
        for axis, log in zip(axes, (False, True)):
            axis.fill_between(self.eps, self.delta_lower, self.delta_upper, color="tab:red", alpha=0.18,
                              label=f"band (lower: simultaneous {1 - self.alpha:.0%})")
            axis.plot(self.eps, self.delta_lower, color="tab:red", lw=0.8)
            axis.plot(self.eps[~below], self.delta[~below], "o", color="tab:red", ms=3.5,
                      label="estimate (max of both directions)")
            if below.any():
                axis.plot(self.eps[below], self.delta[below], "o", color="tab:red", mfc="none", ms=4.5,
                          label="estimate below band floor")
            if self.theory is not None:
                axis.plot(self.eps, self.theory, color="tab:blue", lw=1.6, label=self.theory_label)
            axis.plot(self.eps, self.floor, "--", color="grey", lw=1, label="band floor (detectable)")
            if self.claim is not None:
                self._plot_claim(axis)
            for certificate, style in zip(self.certificates, (":", "-.", "--")):
                if certificate.eps_lo > 0:  # a vertical line, or a legend entry when beyond the grid
                    inside = certificate.eps_lo <= self.eps.max()
                    label = (f"eps_lo at delta={certificate.delta:g}: {certificate.eps_lo:.3g} "
                             f"({1 - certificate.alpha:.0%}){'' if inside else ', beyond the grid'}")
                    if inside:
                        axis.axvline(certificate.eps_lo, color="tab:green", ls=style, lw=1.2, label=label)
                    else:
                        axis.plot([], [], color="tab:green", ls=style, lw=1.2, label=label)
            axis.set_xlabel("eps")
            axis.set_ylabel("delta (log scale)" if log else "delta")
            if log:
                self._log_scale(axis)
            if self.verdict is not None:
                self._plot_claimed_point(axis, log)
            axis.grid(alpha=0.3)
        if tradeoff is not None:
            self._plot_tradeoff(axes[2], tradeoff)
        _few_ticks(*axes)
        legend = _legend_below(figure)
        _literal(figure.suptitle(title or self.title))
        _fixed_layout(figure, legend, len(axes))
        if path is not None:
            write_atomic(path, html.render_png(figure))
        return figure

    def _log_scale(self, axis):
        """The log scale, from a third of the smallest positive delta drawn (the claimed one included) to
        1.5, its tick labels plain text."""
        shown = np.concatenate([self.delta, self.floor, self.theory if self.theory is not None else []])
        low = max(shown[shown > 0].min(initial=1.0), 1e-12)
        if self.verdict is not None and self.verdict.delta > 0:  # the claimed point stays in view
            low = min(low, self.verdict.delta)
        if self.claim is not None and np.any(self.claim.claimed > 0):
            low = min(low, np.nanmin(np.where(self.claim.claimed > 0, self.claim.claimed, np.inf)))
        from matplotlib.ticker import LogFormatter, NullLocator

        axis.set_yscale("log")
        axis.set_ylim(low / 3, 1.5)
        axis.yaxis.set_major_formatter(LogFormatter())  # "1e-04": plain text, no mathtext to parse
        if 1.5 / (low / 3) >= 100:  # two decades or more: ticked at the decades (a tick is a dozen artists to draw)
            axis.yaxis.set_minor_locator(NullLocator())
        else:  # fewer: the minor ticks are labelled too
            axis.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))

    def _plot_claimed_point(self, axis, log: bool):
        """The claimed (eps0, delta0) as a star; a claimed delta of 0 on the log panel sits on its
        bottom edge, with a note saying so."""
        v = self.verdict
        label = f"claimed ({v.eps:g}, {v.delta:g}): {v.label}" + (", suspicious" if v.suspicious else "")
        if not (log and v.delta <= 0):
            axis.plot([v.eps], [v.delta], "k*", ms=11, label=label)
            return
        bottom = axis.get_ylim()[0]
        axis.plot([v.eps], [bottom], "k*", ms=11, clip_on=False, zorder=5, label=label)
        left, right = axis.get_xlim()
        where = (v.eps - left) / (right - left)  # the note runs from the star toward the panel's middle
        side = "left" if where < 1 / 3 else "right" if where > 2 / 3 else "center"
        _literal(axis.annotate("claimed delta = 0, on the bottom edge", (v.eps, bottom), xytext=(0, 12),
                               textcoords="offset points", fontsize=10, ha=side))

    def _plot_claim(self, axis):
        """The claimed curve, its refuted points, and the gap between it and the point estimate."""
        claim = self.claim
        axis.plot(self.eps, claim.claimed, color="black", lw=1.3, label=f"claimed: {claim.source}")
        axis.fill_between(self.eps, self.delta, claim.claimed, where=claim.claimed > self.delta, color="grey",
                          alpha=0.25, label="claim above estimate (a hint of looseness, not proof)")
        if claim.refuted.any():
            axis.plot(self.eps[claim.refuted], claim.claimed[claim.refuted], "x", color="black", ms=7,
                      label=f"refuted ({claim.confidence:.0%}, all points at once)")

    def _plot_tradeoff(self, axis, tradeoff):
        """Type I vs type II error of the score's tests, its band, the exact curve's trade-off function
        (the envelope of its (eps, delta(eps)) on the grid, Dong, Roth & Su 2022, Proposition 2.12: at
        most the exact trade-off, equal to it as the grid fills in) and the claim's."""
        a = np.asarray(tradeoff["type_one"], dtype=float)
        axis.fill_between(a, tradeoff["beta_lower"], tradeoff["beta_upper"], color="tab:red", alpha=0.18,
                          label=f"trade-off band ({1 - tradeoff['alpha']:.0%}, DKW)")
        axis.plot(a, tradeoff["beta"], color="tab:red", lw=1.2, label="score's tests (held-out ROC)")
        if self.theory is not None:  # the exact curve's trade-off, from its values on the grid
            exact = tabulated(self.eps, self.theory).tradeoff(a, self.eps)
            axis.plot(a, exact, color="tab:blue", lw=1.6, label=self.theory_label)
        if self.claim is not None and self.claim.tradeoff is not None:
            axis.plot(a, self.claim.tradeoff, color="black", lw=1.3, label=f"claimed: {self.claim.source}")
        if self.gdp.mu_lo > 0:
            refuted = gaussian_tradeoff(a, self.gdp.mu_lo)
            axis.plot(a, refuted, ":", color="tab:green", lw=1.2,
                      label=f"G_mu at mu_lo = {self.gdp.mu_lo:.3g} (refuted, {1 - self.gdp.alpha:.0%})")
        axis.plot([0, 1], [1, 0], color="grey", lw=0.8, ls="--", label="perfect privacy")
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.set_xlabel("type I error (reject M(D) when it is M(D))")
        axis.set_ylabel("type II error")
        axis.set_title("trade-off: the errors of tests of M(D) vs M(D');\nthe lower the curve, the less private",
                       fontsize=10)
        axis.grid(alpha=0.3)

    @property
    def title(self) -> str:
        """The default title of the plot and of the HTML page."""
        return f"{self.mechanism}: privacy spectrum ({self.n_samples or '?'} samples per side)"

    def to_html(self, path=None, title: str | None = None, png: bytes | None = None) -> str:
        """The report as one self-contained HTML5 page (`auditor.reporting.html.page`); also written to `path`.
        `png`: `plot(title=title)` rendered (`auditor.reporting.html.render_png`), to reuse instead of
        drawing it again."""
        text = html.page(self, title, png)
        if path is not None:
            write_atomic(path, text)
        return text

    def __repr__(self) -> str:
        lines = [f"AuditReport of {self.mechanism}: {self.n_samples or '?'} "
                 f"samples per side, eps {self.eps.min():g} to {self.eps.max():g} ({self.eps.size} points)"]
        i = int(np.argmax(self.delta))
        lines.append(f"  max estimate {self.delta[i]:.4g} at eps {self.eps[i]:g} "
                     f"(band lower {self.delta_lower[i]:.4g}, band floor {self.floor[i]:.3g})")
        if self.theory is not None:
            lines.append(f"  {self.theory_label} curve: max {np.max(self.theory):.4g}")
        lines.append(f"  verdict: {self.verdict}" if self.verdict is not None else "  no claim tested")
        if self.certificates:
            values = ", ".join(f"{c.eps_lo:.4g} at delta={c.delta:g}" for c in self.certificates)
            lines.append(f"  certified eps_lo (not (eps, delta)-DP for eps < eps_lo): {values}, "
                         f"each at {1 - self.certificates[0].alpha:.0%} confidence")
        if note := self.disagreement:
            lines.append(f"  note: {note}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return html.summary(self)
