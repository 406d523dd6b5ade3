"""Showkatbakhsh, Karakus & Diggavi (2018) [ISIT18] at paper scale: what eps_MI = 0.5 delivers as
(eps, delta)-DP.

X ~ U[-1, 1]^{10000 x 800} (numpy default_rng(seed)), sigma_mode fixed at X; for n' in {3303 (log rule),
5500 (linear), 10000 (full)}: sigma_RP^2 of eq. 13, the exact spectrum delta(0) = TV, delta(0.1),
delta(0.5) of the worst entry flip X_ij -> -sign(X_ij) (KL-proxy search over all entries), and the
TV of removing the max-leverage row; next to [ISIT18]'s guarantee delta <= sqrt(2 eps_MI ln 2) = 0.833
(Cor. 1 corrected) and AN's TV at the same eps_MI (mu = 2 / sigma_AN). --quick: n = 2000, d = 40 and
n' scaled by n / 10000 (no paper values).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

from .. import mechanisms, theory
from ..mechanisms.isit18 import ISIT18AdditiveNoise, ISIT18Projection
from .reproduce import Reproduction

EPS_MI = 0.5
#: reference values computed when this scheme was first derived here (seed 0; the paper prints no numbers):
#: n' -> (sigma^2, delta(0), delta(0.1), delta(0.5), TV remove)
PAPER = {3303: (61.2, 0.238, 0.202, 0.087, 0.936), 5500: (2258.2, 0.181, 0.142, 0.040, 0.838),
         10000: (6758.2, 0.135, 0.096, 0.014, 0.703)}


def run(out: pathlib.Path, quick: bool = False, seed: int = 0) -> Reproduction:
    n, d = (2000, 40) if quick else (10_000, 800)
    X = np.random.default_rng(seed).uniform(-1, 1, size=(n, d))
    rows = []
    for full_r in PAPER:
        r = max(d + 2, int(round(full_r * n / 10_000)))
        mech = mechanisms.get("isit18-rp", r=r, eps_mi=EPS_MI).fixed_for(X)
        assert isinstance(mech, ISIT18Projection)
        entry = theory.spectrum(mech, X, [0.0, 0.1, 0.5], neighbor="entry")
        removal = theory.spectrum(mech, X, [0.0], neighbor="remove")
        paper = PAPER[full_r] if (not quick and seed == 0) else (np.nan,) * 5
        rows.append({"n_proj": r, "sigma2": round(mech.noise_scale(X) ** 2, 1), "paper_sigma2": paper[0],
                     "tv_entry": round(float(entry.delta[0]), 3), "paper_tv_entry": paper[1],
                     "delta_0.1": round(float(entry.delta[1]), 3), "paper_delta_0.1": paper[2],
                     "delta_0.5": round(float(entry.delta[2]), 3), "paper_delta_0.5": paper[3],
                     "tv_remove": round(float(removal.delta[0]), 3), "paper_tv_remove": paper[4]})
    an_tv = float(theory.gaussian_delta(0.0, 2.0 / np.sqrt(theory.mi_noise_variance(EPS_MI))))
    an = mechanisms.get("isit18-an", eps_mi=EPS_MI)
    assert isinstance(an, ISIT18AdditiveNoise)
    bound = an.mi_delta(corrected=True)
    notes = [f"Showkatbakhsh et al. (2018)'s entry-level guarantee (Cor. 1, corrected): TV <= sqrt(2 eps_MI ln 2) = "
             f"{bound:.3f}; as printed sqrt(2/log2 e) eps_MI = {an.mi_delta():.3f}.",
             f"AN at eps_MI = {EPS_MI}: worst flip -1 -> +1 has TV {an_tv:.4f}.",
             "Row-level privacy (tv_remove) is not claimed by Showkatbakhsh et al. (2018) and is weak."]
    return Reproduction(tables={"isit18-rp-privacy": pd.DataFrame(rows)}, notes=notes)
