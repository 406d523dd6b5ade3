"""The DP libraries practitioners build with (OpenDP, diffprivlib, Google's python-dp, Opacus), audited
at the guarantee each documents, with one planted misuse per library that the audit must flag.

Every case of `ndis.mechanisms.libraries.cases()` (the installed libraries; the missing ones are
listed in the notes) is audited at its claimed (eps, delta) with the "auto" scorer on an eps grid
around the claim. Acceptance: no correct use is flagged ("violation"); every planted misuse is, with
a certified eps_lo (at the claimed delta) above the claimed eps. Floating-point probes (cases with
features="float-grid") audit a correct use through the grid positions of its outputs: a violation
there is a real property of the implementation (Mironov 2012), reported as such.
"""

from __future__ import annotations

import pathlib
import time

import numpy as np
import pandas as pd

from ..auditor import AuditReport, Scoring, audit
from ..mechanisms import libraries
from ..mechanisms.libraries import LibraryCase
from .plotting import plt, save
from .reproduce import Reproduction

QUICK_FRACTION = 100  # quick=True draws n_samples / 100 per side (at least QUICK_MIN)
QUICK_MIN = 400


def grid(claimed_eps: float) -> np.ndarray:
    """41 points on [0, max(2 eps0, eps0 + 1)], and eps0 itself."""
    return np.unique(np.append(np.linspace(0.0, max(2 * claimed_eps, claimed_eps + 1), 41), claimed_eps))


KINDS = ("use", "misuse (planted)", "floating-point probe")


def _kind(case: LibraryCase) -> str:
    return KINDS[1] if case.planted else KINDS[2] if case.features == "float-grid" else KINDS[0]


def audit_case(case: LibraryCase, n_samples: int, seed: int) -> tuple[AuditReport, float]:
    """(report, seconds) of one case's audit at its claim."""
    started = time.perf_counter()
    report = audit(case.mechanism, case.D, case.D_prime, eps=grid(case.claimed[0]), n_samples=n_samples, seed=seed,
                   claimed=case.claimed, progress=False, scorer=Scoring(scorer="auto", features=case.features))
    return report, time.perf_counter() - started


def run(out: pathlib.Path, quick: bool = False, seed: int = 0) -> Reproduction:
    found, missing = libraries.cases()
    rows = []
    for j, case in enumerate(found):
        n = max(QUICK_MIN, case.n_samples // QUICK_FRACTION) if quick else case.n_samples
        report, seconds = audit_case(case, n, seed + j)
        eps0, delta0 = case.claimed
        assert report.verdict is not None  # the audit checks the case's claim
        rows.append({"library": case.library, "mechanism": case.name, "use": _kind(case), "claimed_eps": eps0,
                     "claimed_delta": delta0, "verdict": report.verdict.label,
                     "eps_lo_at_claimed_delta": report.eps_lo(delta0),
                     "samples_per_side": n, "seconds": seconds, "scorer": report.scorer})
    table = pd.DataFrame(rows)
    notes = [f"{case.library} / {case.name}: {case.note}" for case in found if case.note]
    notes += [f"{name} not audited: {why}" for name, why in missing.items()]
    if len(table):
        uses, misuses, probes = (table[table.use == kind] for kind in KINDS)
        caught = (misuses.verdict == "violation") & (misuses.eps_lo_at_claimed_delta > misuses.claimed_eps)
        notes.append(f"Correct uses flagged: {int((uses.verdict == 'violation').sum())} of {len(uses)}; planted "
                     f"misuses "
                     f"flagged with eps_lo above the claimed eps: {int(caught.sum())} of {len(misuses)}.")
        if len(probes):
            leaking = [f"{r.library} {r.mechanism}" for r in probes.itertuples() if r.verdict == "violation"]
            notes.append(f"Floating-point probes: {len(leaking)} of {len(probes)} implementations tell D from D' by "
                         f"the grid of their outputs{': ' + ', '.join(leaking) if leaking else ''}.")
    notes.append("eps_lo: the certified epsilon at the claimed delta (95%): the mechanism is not (eps, delta)-DP for "
                 "any eps < eps_lo. 'no violation found' is not a proof of privacy.")
    return Reproduction(tables={"audit-libraries": table}, figures=[_figure(table, out)] if len(table) else [],
                        notes=notes)


def _figure(table: pd.DataFrame, out: pathlib.Path) -> pathlib.Path:
    """eps_lo (bars: blue = use, red = planted misuse, orange = floating-point probe) beside the claimed eps
    (black ticks), one row per case."""
    labels = [f"{r.library}: {r.mechanism}" for r in table.itertuples()]
    y = np.arange(len(table))[::-1]
    fig, ax = plt.subplots(figsize=(9, 0.38 * len(table) + 1.4))
    for kind, color in zip(KINDS, ("tab:blue", "tab:red", "tab:orange"), strict=True):
        rows = (table.use == kind).to_numpy()
        label = f"eps_lo, {kind}"
        ax.barh(y[rows], table.eps_lo_at_claimed_delta[rows], color=color, alpha=0.75, label=label)
    ax.plot(table.claimed_eps, y, "|", color="black", ms=14, mew=2, label="claimed eps")
    ax.set(yticks=y, yticklabels=labels, xlabel="eps (eps_lo certified at 95%, at the claimed delta)",
           title="DP libraries audited at their claims")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, out / "audit-libraries.png")
