"""OneRunReport: a one-run audit's estimates beside the accountant's eps and the idealized bounds, as
text, JSON, CSV, PNG (score histograms and the bounds) and one self-contained HTML page, in the
style of `auditor.reporting` (no scripts, user strings escaped, matplotlib text without mathtext);
`write` puts all of them in a folder, each file written atomically."""

from __future__ import annotations

import html
import io
import json
import math
import pathlib
from dataclasses import dataclass, field

import numpy as np

from ...core.files import write_atomic, write_files
from ..reporting import html as report_html
from ..reporting.records import SeedRecord
from ..reporting.report import _plain, versions
from .estimate import Estimate
from .gaussian import CHECK_LEVEL

NAMES = {"steinke": "Steinke, Nasr & Jagielski 2023", "fdp": "f-DP (Mahloujifar, Melis & Chaudhuri 2025)",
         "gaussian": "Gaussian (Agrawal et al. 2026)"}
COLOURS = {"steinke": "tab:orange", "fdp": "tab:purple", "gaussian": "tab:green"}
FILES = ("report.json", "estimates.csv", "scores.csv", "one-run.png", "report.html")


def _number(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return "none" if value == np.inf else f"{float(value):.{digits}g}"


@dataclass(eq=False)
class OneRunReport:
    """Result of `audit_one_run`.

    `estimates` maps each computed method to its `Estimate`; `method` is the one asked for and
    `headline` the one whose eps_lo the report certifies (`eps_lo`, `refutes_claim()`): `method`
    itself unless its assumption was rejected by its checks or it gave no bound, when `fallback` says
    why and `headline` is the assumption-free `estimate.FALLBACK`. `not_computed` maps the estimators
    that gave no bound to the reason. `claimed_eps` is the accountant's eps at `delta` (None: no
    claim); `idealized` holds, with a claim, each estimator's `median` eps_lo over `runs` draws of the
    idealized Gaussian setting at the claimed eps (`idealized`). A training run audited by
    `audit_training` records the `mechanism`'s name, the root `seed` that drew the coin flips and the
    training's seed, the `canaries`' kind and the `timings` of training, scoring and auditing; `info`
    holds the extras (an accountant's claim, the training's parameters and accuracy, the command)."""

    scores: np.ndarray
    included: np.ndarray
    delta: float
    alpha: float
    method: str
    estimates: dict[str, Estimate]
    headline: str
    fallback: str | None = None
    not_computed: dict[str, str] = field(default_factory=dict)
    claimed_eps: float | None = None
    idealized: dict = field(default_factory=dict)
    mechanism: str = "one-run audit"
    seed: SeedRecord | None = None
    canaries: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def estimate(self) -> Estimate:
        """The headline's estimate."""
        return self.estimates[self.headline]

    @property
    def eps_lo(self) -> float:
        """The certified lower bound: not (eps, delta)-DP for any eps < eps_lo, with probability >= 1 - alpha."""
        return self.estimate.eps_lo

    def refutes_claim(self, method: str | None = None) -> bool | None:
        """Does the headline's eps_lo (or `method`'s, if certified) exceed the claimed eps? None without a
        claim, or for an estimate that is not certified."""
        estimate = self.estimates[method or self.headline]
        if self.claimed_eps is None or not estimate.certified:
            return None
        return estimate.eps_lo > self.claimed_eps

    def ceiling(self, method: str) -> float:
        """The most `method` can certify on these canaries (every guess right); inf for the Gaussian bound."""
        return self.estimates[method].details.get("ceiling", np.inf)

    def rows(self) -> list[dict]:
        """One row per computed estimator: eps_lo, certified, confidence, assumption, claim, idealized bound."""
        found = []
        for name, e in self.estimates.items():
            found.append({"method": name, "headline": name == self.headline, "eps_lo": e.eps_lo,
                          "certified": e.certified, "delta": e.delta, "confidence": e.confidence,
                          "asymptotic": e.asymptotic, "claimed_eps": self.claimed_eps,
                          "refutes_claim": self.refutes_claim(name),
                          "idealized_median": self.idealized.get("median", {}).get(name),
                          "ceiling": self.ceiling(name), "assumption": e.assumption, "rejected": e.rejected})
        return found

    def _gaussian_lines(self) -> list[str]:
        g = self.estimates.get("gaussian")
        if g is None:
            return []
        d, checks = g.details, g.details["checks"]
        verdict = (f"REJECTED ({g.rejected}): the Gaussian bound is not certified" if g.rejected
                   else f"not rejected at the {CHECK_LEVEL:.0%} level")
        lines = [f"gaussian model check: {verdict}"]
        if checks:
            lines[0] += (f" (Shapiro-Wilk p = {_number(checks['in']['shapiro_p'], 3)} in, "
                         f"{_number(checks['out']['shapiro_p'], 3)} out; Anderson-Darling p = "
                         f"{_number(checks['in']['anderson_p'], 3)} in, {_number(checks['out']['anderson_p'], 3)} "
                         f"out; Levene p = {_number(checks['levene_p'], 3)})")
        lines.append(f"mean shift {d['shift']:.4g} ({self._percent} CI {d['shift_interval'][0]:.4g} to "
                     f"{d['shift_interval'][1]:.4g}); standardized d = {d['d_hat']:.4g} ({self._percent} CI "
                     f"{d['d_interval'][0]:.4g} to {d['d_interval'][1]:.4g}); one-sided lower bound d_lo = "
                     f"{d['d_lo']:.4g}")
        return lines

    @property
    def _percent(self) -> str:
        return f"{1 - self.alpha:.0%}"

    def summary(self) -> str:
        """The headline in one or two lines: eps_lo, its estimator, the claim's verdict, and the fallback."""
        refutes = self.refutes_claim()
        claim = "" if refutes is None else (f"; the claimed eps {self.claimed_eps:g} is "
                                            + ("REFUTED" if refutes else "not refuted"))
        line = (f"headline: eps_lo = {self.eps_lo:.4g} at delta={self.delta:g} ({self.headline}, "
                f"{self._percent} confidence){claim}")
        return line if self.fallback is None else f"{line}\n{self.fallback}: the headline is {self.headline}'s bound"

    def table(self) -> str:
        """The headline, then a text table of the estimators beside the claim and the idealized bounds, and
        the model checks."""
        m, inside = self.scores.size, int(self.included.sum())
        lines = [f"one-run audit: {m} canaries ({inside} included), delta={self.delta:g}, each eps_lo at "
                 f"{self._percent} confidence" + (f"; claimed eps {self.claimed_eps:g}" if self.claimed_eps else ""),
                 self.summary()]
        lines.append(f"{'method':<9} {'eps_lo':>8} {'idealized':>10} {'ceiling':>8}  refutes claim")
        for row in self.rows():
            refutes = {None: "-", True: "YES", False: "no"}[row["refutes_claim"]]
            lines.append(f"{row['method'] + ('*' if row['headline'] else ''):<9} {row['eps_lo']:>8.4g} "
                         f"{_number(row['idealized_median']):>10} {_number(row['ceiling']):>8}  "
                         + (refutes if row["certified"] else "model rejected; not certified"))
        lines.append("* the headline; idealized: median eps_lo on scores drawn from the Gaussian mechanism at "
                     "the claimed eps (same m); ceiling: every guess right")
        lines += [str(e) for e in self.estimates.values()]
        lines += self._gaussian_lines()
        for name, why in self.not_computed.items():
            lines.append(f"{name}: not computed: {why}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        return _plain({"delta": self.delta, "alpha": self.alpha, "method": self.method, "headline": self.headline,
                       "eps_lo": self.eps_lo, "fallback": self.fallback, "claimed_eps": self.claimed_eps,
                       "refutes_claim": self.refutes_claim(),
                       "estimates": {k: e.to_dict() for k, e in self.estimates.items()},
                       "not_computed": self.not_computed, "idealized": self.idealized, "mechanism": self.mechanism,
                       "seed": self.seed, "canaries": self.canaries, "timings": self.timings,
                       "info": {**self.info, "versions": versions()},
                       "scores": self.scores, "included": self.included.astype(int)})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    @classmethod
    def from_json(cls, source) -> "OneRunReport":
        """Read a report written by `to_json` / `write` (a path or the JSON text)."""
        text = str(source)
        data = json.loads(text if text.lstrip().startswith("{") else pathlib.Path(source).read_text())
        return cls(scores=np.asarray(data["scores"], dtype=float), included=np.asarray(data["included"]) == 1,
                   delta=data["delta"], alpha=data["alpha"], method=data["method"],
                   estimates={k: Estimate(**e) for k, e in data["estimates"].items()}, headline=data["headline"],
                   fallback=data["fallback"], not_computed=data["not_computed"], claimed_eps=data["claimed_eps"],
                   idealized=data["idealized"], mechanism=data["mechanism"], seed=data["seed"],
                   canaries=data["canaries"], timings=data["timings"], info=data["info"])

    def to_frame(self):
        """A pandas DataFrame with one row per estimator (write it with `.to_csv`)."""
        import pandas as pd

        return pd.DataFrame(self.rows())

    def plot(self, path=None, title: str | None = None):
        """Left: histograms of the included and left-out canaries' scores with the fitted Gaussians;
        right: each eps_lo (hatched and grey when not certified) beside the claimed eps, the idealized
        median and the ceiling; the legends sit outside the panels. A matplotlib Figure made without
        pyplot; saved to `path` (atomically) when given."""
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch

        figure = Figure(figsize=(12, 4.4), layout="constrained")
        left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.2, 1]})
        bins = np.histogram_bin_edges(self.scores, bins=min(60, max(10, self.scores.size // 20)))
        for mask, label, colour in ((self.included, "included", "tab:red"), (~self.included, "left out", "tab:blue")):
            left.hist(self.scores[mask], bins=bins, density=True, alpha=0.45, color=colour,
                      label=f"{label} ({int(mask.sum())})")
        g = self.estimates.get("gaussian")
        if g is not None:
            grid = np.linspace(bins[0], bins[-1], 300)
            for mean, colour in ((g.details["mean_in"], "tab:red"), (g.details["mean_out"], "tab:blue")):
                sd = g.details["sd_pooled"]
                left.plot(grid, np.exp(-0.5 * ((grid - mean) / sd) ** 2) / (sd * np.sqrt(2 * np.pi)), color=colour,
                          lw=1.4)
            left.plot([], [], color="grey", lw=1.4, label="equal-variance Gaussian fit")
        left.set_xlabel("canary score")
        left.set_ylabel("density")
        left.set_title("canary scores", fontsize=10)
        left.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.07), ncol=3, frameon=False)
        names = list(self.estimates)
        y = np.arange(len(names))[::-1]
        certified = [self.estimates[n].certified for n in names]
        right.barh(y, [self.estimates[n].eps_lo for n in names], alpha=0.8,
                   color=[COLOURS[n] if ok else "lightgrey" for n, ok in zip(names, certified)],
                   hatch=["" if ok else "//" for ok in certified], edgecolor="black", linewidth=0.5)
        handles = [Patch(facecolor="white", edgecolor="black", label=f"eps_lo ({self._percent})")]
        if not all(certified):
            handles.append(Patch(facecolor="lightgrey", hatch="//", edgecolor="black",
                                 label="model rejected; not certified"))
        medians = self.idealized.get("median", {})
        shown = [x for n in names for x in (medians.get(n), self.ceiling(n)) if x is not None and np.isfinite(x)]
        if medians:
            right.plot([np.nan if medians[n] is None else medians[n] for n in names], y, "D", mfc="none",
                       color="black", ms=7, label="idealized (median, same m)")
        ceiled = [n for n in names if np.isfinite(self.ceiling(n))]
        if ceiled:
            right.plot([self.ceiling(n) for n in ceiled], [y[names.index(n)] for n in ceiled], "|", color="black",
                       ms=16, mew=2, label="ceiling (every guess right)")
        if self.claimed_eps is not None:
            right.axvline(self.claimed_eps, color="tab:red", ls="--", lw=1.4, label=f"claimed eps {self.claimed_eps:.3g}")
            shown.append(self.claimed_eps)
        right.set_yticks(y, [NAMES[n] + (" (headline)" if n == self.headline else "") for n in names], fontsize=8)
        right.set_xlim(0, 1.08 * max(shown + [e.eps_lo for e in self.estimates.values()] + [1.0]))
        right.set_xlabel(f"eps at delta = {self.delta:g}")
        right.set_title("certified lower bounds", fontsize=10)
        lines, labels = right.get_legend_handles_labels()
        right.legend(handles=handles + lines, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.07), ncol=2,
                     frameon=False)
        right.grid(alpha=0.3, axis="x")
        figure.suptitle(title or self.title, parse_math=False)
        if path is not None:
            write_atomic(path, report_html.render_png(figure))
        return figure

    @property
    def title(self) -> str:
        return f"{self.mechanism}: {self.scores.size} canaries, one run"

    def to_html(self, title: str | None = None, png: bytes | None = None) -> str:
        """One self-contained HTML5 page: the estimates table, the Gaussian model's checks, the plot
        (inlined PNG; `png`: a rendering of `plot(title=title)` to reuse) and the provenance."""
        import base64

        title = title or self.title
        png = png or report_html.render_png(self.plot(title=title))
        rows = "".join(
            f"<tr><td>{html.escape(NAMES[r['method']])}{' (headline)' if r['headline'] else ''}</td>"
            f"<td>{_number(r['eps_lo'])}</td><td>{'asymptotic ' if r['asymptotic'] else ''}{r['confidence']:.0%}</td>"
            f"<td>{'yes' if r['certified'] else 'no: model rejected'}</td><td>{_number(r['claimed_eps'])}</td>"
            f"<td>{ {None: '-', True: 'yes', False: 'no'}[r['refutes_claim']] }</td>"
            f"<td>{_number(r['idealized_median'])}</td><td>{_number(r['ceiling'])}</td>"
            f"<td style=\"text-align:left\">{html.escape(r['assumption'])}</td></tr>" for r in self.rows())
        head = "".join(f'<th scope="col">{h}</th>' for h in ("estimator", "eps_lo", "confidence", "certified",
                                                             "claimed eps", "refutes claim", "idealized (median)",
                                                             "ceiling", "assumption"))
        summary = "".join(f"<p><strong>{html.escape(line)}</strong></p>" for line in self.summary().splitlines())
        checks = "".join(f"<li>{html.escape(line)}</li>" for line in self._gaussian_lines())
        skipped = "".join(f"<li>{html.escape(name)}: not computed: {html.escape(why)}</li>"
                          for name, why in self.not_computed.items())
        recorded = {"mechanism": self.mechanism, "seed": self.seed, "canaries": self.canaries, "timings": self.timings}
        provenance = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(json.dumps(_plain(v)))}</dd>"
                             for k, v in {**recorded, **self.info, "versions": versions()}.items() if v)
        image = base64.b64encode(png).decode("ascii")
        m = self.scores.size
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{report_html._STYLE}</style>
</head>
<body>
<main>
<h1>{html.escape(title)}</h1>
<p class="note">One-run audit with ndis: {m} canaries, each included by a secret fair coin flip
({int(self.included.sum())} included), one training run, one score per canary. Each eps_lo says: the mechanism is
<strong>not</strong> (eps, delta)-DP at delta = {self.delta:g} for any eps &lt; eps_lo, at the stated confidence,
if the stated assumption holds (each row a separate statement). An estimate whose assumption the checks reject
is shown but not certified, and never the headline: the headline then falls back to the assumption-free bound.</p>
<h2>Certified lower bounds</h2>
{summary}
<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>
<p class="note">Idealized (median): what the estimator certifies, in the median, when each canary's score is drawn
from the Gaussian mechanism at the claimed eps (no training, the same m): the best an attack that sees each canary's
mechanism exactly can expect. Ceiling: the most a guess-based estimator can certify on {m} canaries (every guess
right); the Gaussian bound has none.</p>
<h2>The Gaussian model</h2>
<p class="note">The Gaussian bound is asymptotic: its confidence is exact when the scores are i.i.d. Gaussian with
equal variances in and out, which the central limit theorem gives white-box DP-SGD canaries in the limit. How it was
checked (Anderson-Darling p-values are interpolated from tables, 0.15 meaning 0.15 or more):</p>
<ul>{checks or "<li>not computed</li>"}</ul>
{f"<h2>Not computed</h2><ul>{skipped}</ul>" if skipped else ""}
<h2>Scores and bounds</h2>
<figure><img src="data:image/png;base64,{image}" alt="histograms of the canary scores and the certified lower bounds"
width="{round(12 * report_html.DPI)}" height="{round(4.4 * report_html.DPI)}"></figure>
<h2>Provenance</h2>
<dl>{provenance}</dl>
</main>
</body>
</html>
"""

    def files(self, title: str | None = None) -> dict[str, str | bytes]:
        """{file name: content} of report.json, estimates.csv, scores.csv, one-run.png and report.html."""
        png = report_html.render_png(self.plot(title=title))
        buffer = io.StringIO()
        self.to_frame().to_csv(buffer, index=False)
        scores = "canary,score,included\n" + "".join(
            f"{i},{s!r},{int(k)}\n" for i, (s, k) in enumerate(zip(self.scores.tolist(), self.included)))
        contents = (self.to_json() + "\n", buffer.getvalue(), scores, png, self.to_html(title, png))
        return dict(zip(FILES, contents))

    def write(self, out, title: str | None = None) -> list[pathlib.Path]:
        """`files` in the folder `out`, all or none (`core.files.write_files`)."""
        return write_files(self.files(title), out)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.table())}</pre>"
