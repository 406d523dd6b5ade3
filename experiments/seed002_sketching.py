"""Burkhardt, Keller, Orlandi & Schwiegelshohn (2025) [LTM], secure sketching: error vs eps, and audits of
the sketches.

1. Error vs eps ([LTM] Sec. 5), synthetic data:
   * ridge: A ~ N(0, 1)^{n x d}, x_gen ~ N(0, I) (the paper's mu^2 = 1 setting), b = A x_gen, lambda = 10; error
     phi (ridge cost ratio) of `ltm-ridge` with Gaussian noise at p = 1 (eq. 4), p = 0.5 and p = 0 (the local end
     of the same sigma^2 n^{1-p} family; the paper says only sigma^2 ~ n^{-p}, the constant is our choice), and
     with the experiments' Laplace noise (b = 1/eps);
   * LRA: A' ~ N(0, 1)^{n x d} with its singular values replaced (k of sqrt(n/k), the rest 1/n);
     error psi of `ltm-lra` (top-k right singular vectors) for the same noise settings.
   eta (the entry bound) is the data's largest |entry| (data-dependent: the paper's synthetic data are unbounded
   and it states no eta), and the zero-output rule is off, as the paper's plots must have had it.
2. Audits at the printed calibrations: `ltm-gauss` with eq. 4 as printed, for several (d, s), on
   uniform data in [-1, 1] (eta = 1), worst replace pair (smallest bucket, row -> -eta sign),
   claimed (eps, delta) = (1, 1e-5): the exact spectrum given the public sketch (derived here: a mean shift) and the
   auditor's verdict; `ltm-laplace` with Thm 3.5's scale and with the experiments' b = 1/eps, claimed
   pure eps = 1 (tested at delta = 1e-6).
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pandas as pd

from .. import mechanisms
from ..auditor import AuditReport, audit
from ..mechanisms.sketching import lra_error, ridge_error
from .plotting import plt
from .reproduce import Reproduction

EPS0, DELTA0 = 1.0, 1e-5


def ridge_problem(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    A = rng.standard_normal((n, d))
    return np.column_stack([A, A @ rng.standard_normal(d)])


def lra_problem(n: int, d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    U, _ = np.linalg.qr(rng.standard_normal((n, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    sv = np.concatenate([np.full(k, np.sqrt(n / k)), np.full(d - k, 1.0 / n)])
    return (U * sv) @ V.T


def _settings(delta: float) -> list[tuple[str, dict[str, Any]]]:
    return [("LTM-Gauss p=1 (eq. 4)", dict(noise="gauss", delta=delta, p=1.0)),
            ("LTM-Gauss p=0.5", dict(noise="gauss", delta=delta, p=0.5)),
            ("local end p=0", dict(noise="gauss", delta=delta, p=0.0)),
            ("LTM-Laplace b=1/eps (experiments)", dict(noise="laplace", scale="experiment"))]


def error_curves(kind: str, D: np.ndarray, eps_grid: tuple[float, ...], m: int, trials: int, rng: np.random.Generator,
                 k: int = 5, lam: float = 10.0) -> list[dict[str, Any]]:
    eta = float(np.abs(D).max())
    rows = []
    for label, options in _settings(1e-5):
        gauss = options["noise"] == "gauss"
        for eps in eps_grid:
            common = dict(m=m, eps=eps, eta=eta, **options)
            if gauss:
                common["enforce_min_n"] = False
            if kind == "ridge":
                mech = mechanisms.get("ltm-ridge", lam=lam, **common)
                err = ridge_error(D, mech.sample(D, trials, rng), lam)
            else:
                mech = mechanisms.get("ltm-lra", k=k, **common)
                err = lra_error(D, mech.sample(D, trials, rng), k)
            rows.append({"task": kind, "scheme": label, "eps": eps, "error_mean": float(np.mean(err)),
                         "error_sd": float(np.std(err, ddof=1))})
    return rows


def audits(n_samples: int, seed: int, quick: bool) -> tuple[pd.DataFrame, dict[str, AuditReport], np.ndarray]:
    rng = np.random.default_rng(seed)
    eps = np.linspace(0.0, 3.0, 13)
    configs = [(1, 1), (2, 1), (3, 2)] if quick else [(1, 1), (2, 1), (3, 1), (3, 2), (5, 3)]
    cases = [(f"ltm-gauss eq. 4, d={d}, s={s}", mechanisms.get("ltm-gauss", m=10, eps=EPS0, delta=DELTA0, eta=1.0, s=s),
              d, (EPS0, DELTA0)) for d, s in configs]
    cases += [("ltm-laplace Thm 3.5 (b = 2 eta m^2 d / eps), d=2",
               mechanisms.get("ltm-laplace", m=10, eps=EPS0, eta=1.0), 2, (EPS0, 1e-6)),
              ("ltm-laplace b = 1/eps (experiments), d=2",
               mechanisms.get("ltm-laplace", m=10, eps=EPS0, eta=1.0, scale="experiment"), 2, (EPS0, 1e-6))]
    rows, reports = [], {}
    for j, (label, mech, d, claimed) in enumerate(cases):
        D = rng.uniform(-1.0, 1.0, size=(3000, d))
        report = audit(mech, D, eps=eps, n_samples=n_samples, seed=seed + j, neighbor="replace:worst",
                       scorer="quadratic", claimed=claimed)
        assert report.verdict is not None  # a claim was passed
        at = int(np.argmin(np.abs(eps - claimed[0])))
        exact = None if report.theory is None else float(report.theory[at])
        rows.append({"mechanism": label, "n": D.shape[0], "m": 10, "d": d,
                     "noise_scale": float(mech.noise_scale(D)) if hasattr(mech, "noise_scale") else np.nan,
                     "claimed_eps": claimed[0], "claimed_delta": claimed[1],
                     "exact_delta_at_claimed_eps": exact,
                     "exact_verdict": None if exact is None else ("violation" if exact > claimed[1] else "consistent"),
                     "estimate_at_claimed_eps": float(report.delta[at]),
                     "lower_at_claimed_eps": float(report.delta_lower[at]),
                     "floor_at_claimed_eps": float(report.floor[at]), "audit_verdict": report.verdict.label,
                     "estimate_at_eps_0": float(report.delta[0]), "samples_per_side": n_samples})
        reports[label] = report
    return pd.DataFrame(rows), reports, eps


def run(out: pathlib.Path, quick: bool = False, seed: int = 0) -> Reproduction:
    rng = np.random.default_rng(seed)
    n, d, trials, m = (8000, 10, 3, 50) if quick else (40_000, 10, 10, 50)
    eps_grid = (0.1, 1.0, 10.0) if quick else (0.05, 0.1, 0.5, 1.0, 3.0, 10.0, 30.0)
    ridge = pd.DataFrame(error_curves("ridge", ridge_problem(n, d, rng), eps_grid, m, trials, rng))
    lra = pd.DataFrame(error_curves("lra", lra_problem(n, d, 3, rng), eps_grid, m, trials, rng, k=3))
    audit_table, reports, eps = audits(20_000 if quick else 400_000, seed, quick)

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    for ax, frame, ylabel in ((axes[0], ridge, "ridge error phi"), (axes[1], lra, "LRA error psi")):
        for scheme, group in frame.groupby("scheme", sort=False):
            ax.loglog(group["eps"], group["error_mean"], "o-", ms=3, label=scheme)
        ax.set(xlabel="eps", ylabel=ylabel, title=f"Burkhardt et al. 2025 synthetic, n = {n}, d = {d}, m = {m}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes[2]
    for label, report in reports.items():
        line = ax.semilogy(eps, np.where(report.delta > 0, report.delta, np.nan), "o", ms=3)[0]
        if report.theory is not None:
            ax.semilogy(eps, np.where(report.theory > 0, report.theory, np.nan), color=line.get_color(), lw=1,
                        label=label)
        else:
            ax.plot([], [], "o", color=line.get_color(), label=label + " (estimate only)")
    ax.axhline(DELTA0, color="grey", ls="--", lw=0.8)
    ax.set(xlabel="eps", ylabel="delta(eps)", title="audits: estimate (dots) vs exact (lines)", ylim=(1e-8, 1.5))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    path = out / "seed002-sketching.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    notes = [
        "Burkhardt et al. (2025)'s synthetic experiments print no numbers (Figs. 1-6); its real-data Tables 2/7 need "
        "UCI data "
        "sets that are not available offline. Claims checked here qualitatively: LTM error well below the local "
        "model's, and falling with eps.",
        f"Ridge: phi at the largest eps is {ridge.groupby('scheme')['error_mean'].last().min():.3g} or more for every "
        "scheme: at this n the client noise of eq. 4 (sigma^2 ~ eta^2 m d^2 / (eps^2 n), eta = max |entry| of [A, b]) "
        "dominates the sketch; the paper's curves reach phi ~ 1 only at n ~ 1e5-1e6.",
        f"Reduced scale: n = {n}, d = {d}, m = {m}, {trials} runs per point (the paper: up to n ~ 6.6e5, d = 50, 20-30 "
        f"runs).",
        "Audits use the exact law given the public sketch (mean shift, derived here) as theory where it exists "
        "(ltm-gauss); ltm-laplace has no closed form here, so only the auditor speaks for it.",
        "exact_verdict compares the exact delta at the claimed eps with the claimed delta; audit_verdict is the "
        "black-box test (a claimed delta below the detectable floor can only give 'no violation found' or "
        "'inconclusive').",
    ]
    return Reproduction(tables={"ridge-error-vs-eps": ridge, "lra-error-vs-eps": lra, "audits": audit_table},
                        figures=[path], notes=notes)
