"""Lu et al. (2023) [OLS-RP] Fig. 3 / Lu et al. (2023) [NDIS] Fig. 5: ALS privacy spectrum, theory vs
black-box estimate.

For each case the worst removal neighbour is chosen by the auditor (`remove:worst`, the row
maximising the asymptotic ALS spectrum), and three curves are drawn on one eps grid:

* theory: the asymptotic spectrum of the ALS limit normals ([NDIS] Thm 4, `theory.spectrum("als")`)
  for the audited row;
* the auditor's estimate (threshold method, quadratic scorer) with its band: the simultaneous
  lower bound and the upper band of the trained score;
* the papers' Eureka estimate (`method="eureka"`, k-NN) with its accuracy-based interval, as a second
  series (smaller sample sizes: the k-NN classifier is the expensive part).

Cases (those the papers audit): Cancer (stand-in county table) with r = 300; Flight, first 20,000 rows, with
r = 1200 (the papers' Flight r; the paper's own r criterion for this experiment is lost) and r = 10000
(so that the curve is visible). Agreement is checked in code: at each eps the theory must lie
between the lower bound and the upper band (columns `theory_in_band`).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

from .. import mechanisms, theory
from ..auditor import AuditReport, Scoring, audit
from . import datasets
from .plotting import plt
from .reproduce import Reproduction


def cases(quick: bool, notes: list[str]) -> list[tuple[str, np.ndarray, int]]:
    """(name, D, r) of the audited cases; Cancer only when $NDIS_CANCER_PATH is set (else a note)."""
    cancer = datasets.optional_cancer(notes)
    flight = datasets.flights(rows=20_000)
    out = [] if cancer is None else [("Cancer", cancer, 300)]
    out += ([] if quick else [("Flight-20000", flight, 1200)]) + [("Flight-20000", flight, 10_000)]
    return out


def audit_case(D: np.ndarray, r: int, eps: np.ndarray, n_samples: int, n_eureka: int,
               seed: int) -> tuple[pd.DataFrame, int, AuditReport]:
    """Threshold audit (+ optional Eureka audit) of ALS(r) on D's worst removal pair; one table."""
    mech = mechanisms.get("als", r=r)
    report = audit(mech, D, eps=eps, n_samples=n_samples, seed=seed, neighbor="remove:worst", scorer="quadratic")
    row = report.neighbor["row"]
    exact = theory.spectrum("als", D, eps, neighbor="remove", rows=[row], r=r)
    worst = theory.spectrum("als", D, eps, neighbor="remove", rows="worst", r=r)
    frame = pd.DataFrame({
        "eps": eps, "theory": exact.delta, "theory_worst_row": worst.delta,
        "estimate": report.delta, "lower": report.delta_lower, "upper": report.delta_upper, "floor": report.floor,
    })
    frame["theory_in_band"] = (frame["lower"] <= frame["theory"]) & (frame["theory"] <= frame["upper"])
    if n_eureka:
        coarse = eps[::5]
        eureka = audit(mech, D, eps=coarse, n_samples=n_eureka, seed=seed + 1, neighbor=f"remove:{row}",
                       scorer=Scoring(method="eureka", eureka={"k": _eureka_k(n_eureka)}))
        for column, values in (("eureka", eureka.delta), ("eureka_lower", eureka.delta_lower),
                               ("eureka_upper", eureka.delta_upper)):
            frame[column] = np.nan
            frame.loc[frame.index[::5], column] = values
        frame["theory_in_eureka_interval"] = ((frame["eureka_lower"] <= frame["theory"])
                                             & (frame["theory"] <= frame["eureka_upper"]))
        frame["theory_in_eureka_interval"] = frame["theory_in_eureka_interval"].where(frame["eureka"].notna())
    return frame, row, report


def _eureka_k(n_samples: int) -> int:
    """k ~ sqrt(n_train), odd (the Eureka paper's rule; the authors' code uses 10x that, which is
    too slow for a 12-dimensional kd-tree here)."""
    k = int(np.ceil(np.sqrt(n_samples)))
    return k + 1 if k % 2 == 0 else k


def run(out: pathlib.Path, quick: bool = False, seed: int = 0) -> Reproduction:
    eps = np.linspace(0.0, 2.0, 9 if quick else 21)
    n_samples = 20_000 if quick else 1_000_000
    n_eureka = 0 if quick else 20_000
    tables: dict[str, pd.DataFrame] = {}
    summary: list[dict[str, object]] = []
    figures: list[pathlib.Path] = []
    skipped: list[str] = []
    all_cases = cases(quick, skipped)
    fig, axes = plt.subplots(2, len(all_cases), figsize=(5.2 * len(all_cases), 7.6), squeeze=False)
    for j, (name, D, r) in enumerate(all_cases):
        frame, row, report = audit_case(D, r, eps, n_samples, n_eureka, seed + 10 * j)
        key = f"{name.lower()}-r{r}"
        tables[key] = frame
        summary.append({
            "dataset": name, "n": D.shape[0], "r": r, "row": row, "samples_per_side": n_samples,
            "scorer": report.scorer, "theory_at_eps_0": frame["theory"].iloc[0],
            "estimate_at_eps_0": frame["estimate"].iloc[0],
            "theory_at_eps_1": float(np.interp(1.0, eps, frame["theory"])),
            "estimate_at_eps_1": float(np.interp(1.0, eps, frame["estimate"])),
            "theory_in_band_all_eps": bool(frame["theory_in_band"].all()),
            "theory_in_eureka_interval_all_eps": (bool(frame["theory_in_eureka_interval"].dropna().astype(bool).all())
                                                 if "eureka" in frame else None),
            "theory_equals_worst_row": bool(np.allclose(frame["theory"], frame["theory_worst_row"], rtol=1e-6,
                                                        atol=1e-300)),
        })
        for i, log in enumerate((False, True)):
            ax = axes[i, j]
            ax.fill_between(eps, frame["lower"], frame["upper"], color="tab:red", alpha=0.18, label="auditor band")
            ax.plot(eps, frame["estimate"], "o", color="tab:red", ms=3.5, label="auditor estimate")
            if "eureka" in frame:
                shown = frame.dropna(subset=["eureka"])
                ax.errorbar(shown["eps"], shown["eureka"], yerr=[shown["eureka"] - shown["eureka_lower"],
                                                                shown["eureka_upper"] - shown["eureka"]],
                            fmt="s", color="tab:green", ms=3, capsize=2, lw=0.8, label="Eureka (k-NN)")
            ax.plot(eps, frame["theory"], color="tab:blue", lw=1.6, label="theory (asymptotic)")
            if log:
                ax.set_yscale("log")
                positive = frame[["theory", "estimate"]].to_numpy()
                positive = positive[positive > 0]
                if positive.size:
                    ax.set_ylim(max(positive.min() / 3, 1e-8), 1.5)
            ax.set(xlabel="eps", ylabel="delta(eps)", title=f"ALS, {name} (n = {D.shape[0]}), r = {r}")
            ax.grid(True, which="both", alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "fig-als-spectrum.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    figures.append(path)
    tables = {"summary": pd.DataFrame(summary), **tables}
    notes = [
        "[OLS-RP] Fig. 3 and [NDIS] Fig. 5 (Lu et al. 2023) print no numbers; the claims are qualitative: the "
        "black-box estimate approaches the asymptotic theory from below, so the theory already holds at "
        "practical r.",
        "Cancer is the stand-in county table of experiments.datasets (3047 rows; the papers' table has 2809 "
        "rows and is not available).",
        "Flight, first 20,000 rows: the papers' criterion for r in this experiment is lost; r = 1200 is the "
        "papers' Flight r (its curve falls fast: below 1e-4 beyond eps ~ 1); r = 10000 makes the curve visible "
        "over the whole grid.",
        "The audited row is the worst at eps = 1 (the papers' setting); theory_worst_row is the maximum "
        "over all rows at each eps (on Cancer another row dominates for eps < 0.5).",
        "theory_in_band: lower bound <= theory <= upper band of the trained score; the upper band bounds "
        "the trained score's delta, not the mechanism's, so a failure there means the scorer is not "
        "Bayes-optimal, while theory < lower bound would refute the theory.",
    ]
    notes += skipped
    if not quick:
        notes.append("Eureka series: k-NN with k = sqrt(n) (odd) on 20,000 samples per side, at eps = 0, 0.5, ..., 2 "
                     "(the papers used "
                     "10^7 / 10^6 and k = 10 sqrt(n); that is hours on this machine).")
    return Reproduction(tables=tables, figures=figures, notes=notes)
