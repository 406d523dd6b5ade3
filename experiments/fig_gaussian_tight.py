"""Lu, Magdon-Ismail, Wei & Zikas (2023) [NDIS] Fig. 7: the Gaussian mechanism's claimed (Dwork-Roth)
guarantee against its exact spectrum.

The classic calibration sigma = sqrt(2 ln(1.25/delta0)) / eps0 (sensitivity 1) is compared with the
exact delta(eps0) it achieves ([NDIS] App. D.2, Cor. 5) and with the analytic sigma
that reaches delta0 exactly ([NDIS] Cor. 4).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

from .. import theory
from .plotting import plt, save
from .reproduce import Reproduction

EPS0 = 1.0
#: (delta0 -> (tight delta / delta0 factor, analytic sigma saving)) from our own earlier check
REFERENCE = {1e-5: (243.0, 0.23), 1e-6: (313.0, 0.203)}


def run(out: pathlib.Path, quick: bool = False, seed: int = 0) -> Reproduction:
    deltas = np.array([1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]) if not quick else np.array([1e-5, 1e-6])
    rows = []
    for delta0 in deltas:
        classic = theory.classic_gaussian_sigma(EPS0, delta0)
        tight = theory.gaussian_delta(EPS0, 1.0 / classic)
        analytic = theory.gaussian_sigma(EPS0, delta0)
        ref = REFERENCE.get(float(delta0), (np.nan, np.nan))
        rows.append({
            "delta0": delta0, "sigma_classic": classic, "exact_delta_at_classic": tight,
            "overstatement": delta0 / tight, "overstatement_reference": ref[0],
            "sigma_analytic": analytic, "noise_saving": 1.0 - analytic / classic, "noise_saving_reference": ref[1],
        })
    table = pd.DataFrame(rows)

    eps = np.linspace(0.0, 3.0, 121)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    delta0 = 1e-5
    for sigma, label, style in ((theory.classic_gaussian_sigma(EPS0, delta0), "classic sigma", "-"),
                                (theory.gaussian_sigma(EPS0, delta0), "analytic sigma", "--")):
        left.semilogy(eps, theory.gaussian_delta(eps, 1.0 / sigma), style, label=f"{label} = {sigma:.3f}")
    left.plot([EPS0], [delta0], "k*", ms=12, label="claimed (1, 1e-5)")
    left.set(xlabel="eps", ylabel="exact delta(eps)", title="Spectrum of the Gaussian mechanism (sensitivity 1)")
    left.legend()
    left.grid(True, which="both", alpha=0.3)
    right.semilogx(table["delta0"], table["sigma_classic"], "o-", label="classic (Dwork-Roth)")
    right.semilogx(table["delta0"], table["sigma_analytic"], "s--", label="analytic (exact)")
    right.set(xlabel="delta0", ylabel="sigma at eps0 = 1", title="Noise needed for (1, delta0)-DP")
    right.legend()
    right.grid(True, which="both", alpha=0.3)
    path = save(fig, out / "fig-gaussian-tight.png")
    notes = [
        "Lu et al. (2023) [NDIS] state that the classic calibration's actual delta is about two orders of magnitude "
        "below the claimed one and that ~20% less noise suffices; its figure's numbers were not extracted. "
        "The reference columns are values from our own earlier check, recomputed here exactly.",
    ]
    return Reproduction(tables={"gaussian-tight": table}, figures=[path], notes=notes)
