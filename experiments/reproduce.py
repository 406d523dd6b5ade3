"""`ndis reproduce`: one command per figure or table of the source papers.

Each reproduction is a module of `experiments` with a function `run(out, quick, seed)` that returns a
`Reproduction` (tables, figures, notes). This module writes every table as CSV and as a markdown
table (with a "paper" column where the paper printed numbers), and a `run.json` recording the
command, the seed, the wall time and the package versions.
"""

from __future__ import annotations

import importlib
import json
import pathlib
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

#: name -> (module, one-line description)
REPRODUCTIONS = {
    "fig-gaussian-tight": ("fig_gaussian_tight", "Lu et al. 2023 [NDIS] Fig. 7: Gaussian mechanism, claimed "
                                                 "(Dwork-Roth) vs tight delta and sigma"),
    "fig-privacy-utility": ("fig_privacy_utility", "Lu et al. 2023 [OLS-RP] Fig. 2: privacy-utility trade-off of ALS, "
                                                   "Gaussian LS and Sheffet's RP LS (theory)"),
    "table-rp-utility": ("table_rp_utility", "Lu et al. 2023 [NDIS] Tables I and III: PDR and DPR of M_RP, M_RP^rel, "
                                             "Sheffet 2019 [15] and Showkatbakhsh et al. 2018 [17]"),
    "table-ls-utility": ("table_ls_utility", "Lu et al. 2023 [NDIS] Tables II and IV: error of M_OLS, M_ALS, M_RP-LS, "
                                             "Gaussian LS, Sheffet 2019 [15], Showkatbakhsh et al. 2018 [17]"),
    "fig-rp-inherent": ("fig_rp_inherent", "Lu et al. 2023 [NDIS] Fig. 6: inherent privacy spectrum of RP without "
                                           "noise on Flight (and Song by path)"),
    "fig-rlc-spectrum": ("fig_rlc_spectrum", "Lu et al. 2023 [NDIS] Figs. 9-10: RLC and M_RLC theory vs estimate "
                                             "(Cancer), RLC theory on Flight (and Song)"),
    "fig-als-spectrum": ("fig_als_spectrum", "Lu et al. 2023 [OLS-RP] Fig. 3 / [NDIS] Fig. 5: ALS asymptotic spectrum "
                                             "vs black-box estimate (Cancer, Flight-20000)"),
    "seed001-privacy-utility": ("seed001_privacy_utility", "Showkatbakhsh et al. 2018 [ISIT18] Figs. 1-2: relative "
                                                           "error of AN / RP regression vs n and eps_MI, exact entry "
                                                           "spectra vs the MI-DP claim"),
    "seed002-sketching": ("seed002_sketching", "Burkhardt et al. 2025 [LTM] Sec. 5: ridge / LRA error vs eps of the "
                                               "LTM sketches, audits of ltm-gauss (several d, s) and ltm-laplace at "
                                               "their printed calibrations"),
    "seed003-masking": ("seed003_masking", "Ding et al. 2022 [Masking] Table 1 (every printed sigma) and audits of the "
                                           "masking schemes (A), (B), (C), blocks against their claimed (eps, delta)"),
    "table-mask-sigma": ("table_mask_sigma", "Ding et al. 2022 [Masking] Table 1: sigma of additive noise (Thm 3.2) "
                                             "and matrix masking (Thm 3.4)"),
    "table-isit18-privacy": ("table_isit18_privacy", "Showkatbakhsh et al. 2018 [ISIT18] at paper scale: exact (eps, "
                                                     "delta) of its RP at eps_MI = 0.5 (n = 10,000, d = 800)"),
    "audit-libraries": ("audit_libraries", "OpenDP, diffprivlib, python-dp and Opacus mechanisms audited at their "
                                           "documented guarantees, with one planted misuse per library"),
    "validate-claims": ("validate_claims", "Lu et al. 2023 [NDIS] RP and [OLS-RP] ALS theory curves as claims, "
                                           "validated by audits; a deliberately wrong RP curve refuted by the audit "
                                           "and by the exact curve"),
}


@dataclass
class Reproduction:
    """What a reproduction produced: named tables, figure paths and notes on discrepancies."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: list[pathlib.Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def names() -> list[str]:
    return list(REPRODUCTIONS)


def _markdown(frame: pd.DataFrame) -> str:
    def cell(v: object) -> str:
        if isinstance(v, (float, np.floating)):
            return "—" if np.isnan(v) else f"{v:.6g}"
        return str(v)

    cells = [[cell(v) for v in row] for row in frame.itertuples(index=False)]
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    return "\n".join([head, rule] + ["| " + " | ".join(row) + " |" for row in cells])


def run(name: str, out: str | pathlib.Path = "ndis-out/reproduce", quick: bool = False,
        seed: int = 0) -> dict[str, Any]:
    """Run reproduction `name`, write its outputs under out/name, and return its run record."""
    if name not in REPRODUCTIONS:
        raise ValueError(f"unknown reproduction {name!r}; known: {', '.join(names())}")
    module_name, description = REPRODUCTIONS[name]
    module = importlib.import_module(f".{module_name}", __package__)
    folder = pathlib.Path(out) / name
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    result: Reproduction = module.run(folder, quick=quick, seed=seed)
    seconds = time.perf_counter() - started
    sections = [f"# {name}\n\n{description}\n"]
    for table_name, frame in result.tables.items():
        frame.to_csv(folder / f"{table_name}.csv", index=False)
        sections.append(f"## {table_name}\n\n{_markdown(frame)}\n")
    if result.notes:
        sections.append("## Notes\n\n" + "\n".join(f"* {note}" for note in result.notes) + "\n")
    sections.append(f"Wall time {seconds:.1f} s (quick={quick}, seed={seed}).\n")
    (folder / "results.md").write_text("\n".join(sections))
    record = {
        "name": name, "description": description, "command": " ".join(sys.argv), "quick": quick,
        "seed": seed, "seconds": seconds, "tables": sorted(result.tables),
        "figures": [str(p) for p in result.figures], "notes": result.notes,
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "pandas": pd.__version__},
    }
    (folder / "run.json").write_text(json.dumps(record, indent=2))
    return record
