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

from ndis.auditor.one_run.estimate import Estimate
from ndis.auditor.reporting import html as report_html
from ndis.auditor.reporting.report import _plain, versions
from ndis.core.files import write_atomic

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
    """Result of `audit_one_run`. `estimates` maps each computed method to its `Estimate`; `eps_lo`
    is the chosen `method`'s. `claimed_eps` is the accountant's eps at `delta` (None: no claim);
    `idealized` holds each estimator's `ceiling` on these m canaries and, with a claim, its `median`
    eps_lo over `runs` draws of the idealized Gaussian setting at the claimed eps (`idealized`)."""

    scores: np.ndarray
    included: np.ndarray
    delta: float
    alpha: float
    method: str
    estimates: dict
    claimed_eps: float | None = None
    idealized: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def estimate(self) -> Estimate:
        return self.estimates[self.method]

    @property
    def eps_lo(self) -> float:
        """The chosen method's certified lower bound: not (eps, delta)-DP for any eps < eps_lo."""
        return self.estimate.eps_lo

    def refutes_claim(self, method: str | None = None) -> bool | None:
        """Does `method`'s eps_lo (default: the chosen one's) exceed the claimed eps? None without a claim."""
        if self.claimed_eps is None:
            return None
        return self.estimates[method or self.method].eps_lo > self.claimed_eps

    def rows(self) -> list[dict]:
        """One row per computed estimator: eps_lo, confidence, assumption, claim, idealized bounds."""
        found = []
        for name, e in self.estimates.items():
            found.append({"method": name, "eps_lo": e.eps_lo, "delta": e.delta, "confidence": e.confidence,
                          "asymptotic": e.asymptotic, "claimed_eps": self.claimed_eps,
                          "refutes_claim": self.refutes_claim(name),
                          "idealized_median": self.idealized.get("median", {}).get(name),
                          "ceiling": self.idealized.get("ceiling", {}).get(name), "assumption": e.assumption})
        return found

    def _gaussian_lines(self) -> list[str]:
        g = self.estimates.get("gaussian")
        if g is None:
            return []
        d, checks = g.details, g.details["checks"]
        verdict = ("REJECTED at the 1% level: the Gaussian bound's confidence is not supported, and the fdp bound's "
                   "Gaussian-curve assumption is in doubt; steinke's needs neither" if d["model_rejected"]
                   else "not rejected at the 1% level")
        return [f"gaussian model check: {verdict} (Shapiro-Wilk p = {_number(checks['in']['shapiro_p'], 3)} in, "
                f"{_number(checks['out']['shapiro_p'], 3)} out; Anderson-Darling p = "
                f"{_number(checks['in']['anderson_p'], 3)} in, {_number(checks['out']['anderson_p'], 3)} out; "
                f"Levene p = {_number(checks['levene_p'], 3)})",
                f"mean shift {d['shift']:.4g} ({self._percent} CI {d['shift_interval'][0]:.4g} to "
                f"{d['shift_interval'][1]:.4g}); standardized d = {d['d_hat']:.4g} ({self._percent} CI "
                f"{d['d_interval'][0]:.4g} to {d['d_interval'][1]:.4g}); one-sided lower bound d_lo = {d['d_lo']:.4g}"]

    @property
    def _percent(self) -> str:
        return f"{1 - self.alpha:.0%}"

    def table(self) -> str:
        """A text table of the estimators beside the claim and the idealized bounds, and the model checks."""
        m, inside = self.info.get("m", self.scores.size), self.info.get("included", int(self.included.sum()))
        lines = [f"one-run audit: {m} canaries ({inside} included), delta={self.delta:g}, each eps_lo at "
                 f"{self._percent} confidence" + (f"; claimed eps {self.claimed_eps:g}" if self.claimed_eps else "")]
        head = f"{'method':<9} {'eps_lo':>8} {'idealized':>10} {'ceiling':>8}  refutes claim"
        lines.append(head)
        for row in self.rows():
            refutes = {None: "-", True: "YES", False: "no"}[row["refutes_claim"]]
            lines.append(f"{row['method'] + ('*' if row['method'] == self.method else ''):<9} "
                         f"{row['eps_lo']:>8.4g} {_number(row['idealized_median']):>10} {_number(row['ceiling']):>8}  "
                         f"{refutes}")
        lines.append("* the chosen method; idealized: median eps_lo on scores drawn from the Gaussian mechanism at "
                     "the claimed eps (same m); ceiling: every guess right")
        lines += [str(e) for e in self.estimates.values()]
        lines += self._gaussian_lines()
        for name, why in self.info.get("not_computed", {}).items():
            lines.append(f"{name}: not computed: {why}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        return _plain({"delta": self.delta, "alpha": self.alpha, "method": self.method, "eps_lo": self.eps_lo,
                       "claimed_eps": self.claimed_eps, "estimates": {k: e.to_dict() for k, e in self.estimates.items()},
                       "idealized": self.idealized, "info": {**self.info, "versions": versions()},
                       "scores": self.scores, "included": self.included.astype(int)})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    @classmethod
    def from_json(cls, source) -> "OneRunReport":
        """Read a report written by `to_json` / `write` (a path or the JSON text)."""
        text = str(source)
        data = json.loads(text if text.lstrip().startswith("{") else pathlib.Path(source).read_text())
        ideal = data["idealized"]
        ideal["ceiling"] = {k: np.inf if v is None else v for k, v in ideal.get("ceiling", {}).items()}
        return cls(scores=np.asarray(data["scores"], dtype=float), included=np.asarray(data["included"]) == 1,
                   delta=data["delta"], alpha=data["alpha"], method=data["method"],
                   estimates={k: Estimate(**e) for k, e in data["estimates"].items()},
                   claimed_eps=data["claimed_eps"], idealized=ideal, info=data["info"])

    def to_frame(self):
        """A pandas DataFrame with one row per estimator (write it with `.to_csv`)."""
        import pandas as pd

        return pd.DataFrame(self.rows())

    def plot(self, path=None, title: str | None = None):
        """Left: histograms of the included and left-out canaries' scores with the fitted Gaussians;
        right: each eps_lo beside the claimed eps, the idealized median and the ceiling. A matplotlib
        Figure made without pyplot; saved to `path` (atomically) when given."""
        from matplotlib.figure import Figure

        figure = Figure(figsize=(12, 4.4))
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
        left.legend(fontsize=8)
        names = list(self.estimates)
        y = np.arange(len(names))[::-1]
        right.barh(y, [self.estimates[n].eps_lo for n in names], color=[COLOURS[n] for n in names], alpha=0.8,
                   label=f"eps_lo ({self._percent})")
        medians = self.idealized.get("median", {})
        ceilings = self.idealized.get("ceiling", {})
        shown = [x for n in names for x in (medians.get(n), ceilings.get(n)) if x is not None and np.isfinite(x)]
        if medians:
            right.plot([medians[n] for n in names], y, "D", mfc="none", color="black", ms=7,
                       label="idealized (median, same m)")
        ceiled = [n for n in names if np.isfinite(ceilings.get(n, np.inf))]
        if ceiled:
            right.plot([ceilings[n] for n in ceiled], [y[names.index(n)] for n in ceiled], "|", color="black", ms=16,
                       mew=2, label="ceiling (every guess right)")
        if self.claimed_eps is not None:
            right.axvline(self.claimed_eps, color="tab:red", ls="--", lw=1.4, label=f"claimed eps {self.claimed_eps:.3g}")
            shown.append(self.claimed_eps)
        right.set_yticks(y, [NAMES[n] for n in names], fontsize=8)
        right.set_xlim(0, 1.08 * max(shown + [e.eps_lo for e in self.estimates.values()] + [1.0]))
        right.set_xlabel(f"eps at delta = {self.delta:g}")
        right.set_title("certified lower bounds", fontsize=10)
        right.legend(fontsize=7, loc="best")
        right.grid(alpha=0.3, axis="x")
        figure.suptitle(title or self.title, parse_math=False)
        figure.tight_layout()
        if path is not None:
            write_atomic(path, report_html.render_png(figure))
        return figure

    @property
    def title(self) -> str:
        return f"{self.info.get('mechanism', 'one-run audit')}: {self.scores.size} canaries, one run"

    def to_html(self, title: str | None = None, png: bytes | None = None) -> str:
        """One self-contained HTML5 page: the estimates table, the Gaussian model's checks, the plot
        (inlined PNG; `png`: a rendering of `plot(title=title)` to reuse) and the provenance."""
        import base64

        title = title or self.title
        png = png or report_html.render_png(self.plot(title=title))
        rows = "".join(
            f"<tr><td>{html.escape(NAMES[r['method']])}{' (chosen)' if r['method'] == self.method else ''}</td>"
            f"<td>{_number(r['eps_lo'])}</td><td>{'asymptotic ' if r['asymptotic'] else ''}{r['confidence']:.0%}</td>"
            f"<td>{_number(r['claimed_eps'])}</td><td>{ {None: '-', True: 'yes', False: 'no'}[r['refutes_claim']] }</td>"
            f"<td>{_number(r['idealized_median'])}</td><td>{_number(r['ceiling'])}</td>"
            f"<td style=\"text-align:left\">{html.escape(r['assumption'])}</td></tr>" for r in self.rows())
        head = "".join(f'<th scope="col">{h}</th>' for h in ("estimator", "eps_lo", "confidence", "claimed eps",
                                                             "refutes claim", "idealized (median)", "ceiling",
                                                             "assumption"))
        checks = "".join(f"<li>{html.escape(line)}</li>" for line in self._gaussian_lines())
        skipped = "".join(f"<li>{html.escape(name)}: {html.escape(why)}</li>"
                          for name, why in self.info.get("not_computed", {}).items())
        provenance = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(json.dumps(_plain(v)))}</dd>"
                             for k, v in {**self.info, "versions": versions()}.items() if k != "not_computed")
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
if the stated assumption holds (each row a separate statement).</p>
<h2>Certified lower bounds</h2>
<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>
<p class="note">Idealized (median): what the estimator certifies, in the median, when each canary's score is drawn
from the Gaussian mechanism at the claimed eps (no training, the same m): the best an attack that sees each canary's
mechanism exactly can expect. Ceiling: the most a guess-based estimator can certify on {m} canaries (every guess
right); the Gaussian bound has none.</p>
<h2>The Gaussian model</h2>
<p class="note">The Gaussian bound is asymptotic: its confidence is exact when the scores are i.i.d. Gaussian with
equal variances in and out, which the central limit theorem gives white-box DP-SGD canaries in the limit. How it was
checked (Anderson-Darling p-values are interpolated from tables, 0.15 meaning 0.15 or more):</p>
<ul>{checks or "<li>not computed</li>"}{skipped}</ul>
<h2>Scores and bounds</h2>
<figure><img src="data:image/png;base64,{image}" alt="histograms of the canary scores and the certified lower bounds"
width="{round(12 * report_html.DPI)}" height="{round(4.4 * report_html.DPI)}"></figure>
<h2>Provenance</h2>
<dl>{provenance}</dl>
</main>
</body>
</html>
"""

    def write(self, out, title: str | None = None) -> list[pathlib.Path]:
        """report.json, estimates.csv, scores.csv, one-run.png and report.html in the folder `out`."""
        out = pathlib.Path(out)
        png = report_html.render_png(self.plot(title=title))
        buffer = io.StringIO()
        self.to_frame().to_csv(buffer, index=False)
        scores = "canary,score,included\n" + "".join(
            f"{i},{s!r},{int(k)}\n" for i, (s, k) in enumerate(zip(self.scores.tolist(), self.included)))
        contents = (self.to_json() + "\n", buffer.getvalue(), scores, png, self.to_html(title, png))
        return [write_atomic(out / name, content) for name, content in zip(FILES, contents)]

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.table())}</pre>"
