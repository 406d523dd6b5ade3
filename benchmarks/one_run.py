"""One-run auditing (`ndis.auditor.one_run`): coverage and tightness in the idealized setting, and one
Opacus DP-SGD training run per claimed eps.

    python benchmarks/one_run.py [--runs 100] [--gaussian-runs 1000] [--only laws gaussian tightness training]

* laws: the coverage of the headline (`audit_one_run(..., method="gaussian")`: the Gaussian bound when
  its model checks pass, else Steinke et al.'s) and of each estimator, on score laws with an exact
  curve (`ndis.auditor.one_run.laws`): Gaussian, Laplace, Student t with 3 degrees of freedom,
  randomized response, sums of T clipped steps (T = 5, 20, 100; and T = 20 rounded to 1/16) and
  Poisson-subsampled sums, each calibrated to an exact eps in {2, 4, 8} at delta = 1e-5, m = 1000, `--runs` seeds each;
* gaussian: the Gaussian estimator's coverage alone in the idealized setting (each canary's score
  N(mu, 1) if included, N(0, 1) if not, mu = theory.gaussian_mu(eps, delta)) on `--gaussian-runs`
  runs per eps in {1, 2, 4, 8} (its confidence is exact there, so 100 runs show 95 +- 2.2 covered;
  more runs measure it);
* tightness: the median eps_lo of each estimator against m (eps = 4 and 8) and its ceiling on m canaries;
* training: Opacus DP-SGD on scikit-learn's digits with 1000 white-box Dirac canaries, 100 full-batch
  steps at the noise Opacus calibrates to eps in {2, 4, 8} at delta = 1e-5, one run each, and one run
  at eps 2 with the planted bug "no-clip"; eps_lo of the three estimators beside the accountant's eps.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ndis.auditor.one_run import METHODS, audit_one_run, fdp, gaussian, idealized, laws, steinke

DELTA, ALPHA = 1e-5, 0.05
#: The score laws of the coverage table: (kind, fixed parameters).
LAWS = (("gaussian", {}), ("laplace", {}), ("student-t3", {}), ("randomized-response", {}),
        ("clipped-sums", {"steps": 5}), ("clipped-sums", {"steps": 20}), ("clipped-sums", {"steps": 100}),
        ("clipped-sums", {"steps": 20, "resolution": 1 / 16}), ("subsampled-sums", {"steps": 100, "rate": 0.1}))


def law_coverage(runs: int, m: int = 1000, only: str = "") -> None:
    print(f"## Coverage of the headline on score laws with an exact curve (m = {m}, delta = {DELTA:g}, "
          f"alpha = {ALPHA}, {runs} runs per cell)\n")
    cells = [(kind, fixed, eps) for kind, fixed in LAWS for eps in (2.0, 4.0, 8.0) if only in _cell(kind, fixed, eps)]
    print("The headline is `audit_one_run(scores, included, method=\"gaussian\")`'s eps_lo: the Gaussian bound when "
          "its model checks pass, else Steinke et al.'s (\"fell back\": the runs where the checks rejected the model or it gave no bound). A cell's coverage is the share of runs with eps_lo <= the "
          f"law's exact eps; it is marked below 95% when its misses reject a 95% coverage at the 5% level over the "
          f"{len(cells)} cells (one-sided binomial test at 0.05 / {len(cells)}: more than "
          f"{_allowed(runs, len(cells))} misses of {runs}).\n")
    print("| law | exact eps | headline <= eps | gaussian (ungated) <= eps | fell back | steinke <= eps | "
          "fdp <= eps | median headline | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, fixed, eps in cells:
        name = _cell(kind, fixed)
        started = time.perf_counter()
        law = laws.calibrated(kind, eps, DELTA, **fixed)
        found = {key: np.empty(runs) for key in ("headline", *METHODS)}
        fell_back = 0
        for run, child in enumerate(np.random.SeedSequence([int(eps), len(name), run_key(name)]).spawn(runs)):
            report = audit_one_run(*law.draw(m, np.random.default_rng(child)), delta=DELTA, alpha=ALPHA,
                                   method="gaussian", compare=True)
            found["headline"][run] = report.eps_lo
            for method in METHODS:
                found[method][run] = report.estimates[method].eps_lo if method in report.estimates else 0.0
            fell_back += report.headline != "gaussian"
        covered = {key: int(np.sum(values <= eps + 1e-9)) for key, values in found.items()}
        flag = " **below 95%**" if runs - covered["headline"] > _allowed(runs, len(cells)) else ""
        print(f"| {name} | {eps:g} | {covered['headline']}/{runs}{flag} | {covered['gaussian']}/{runs} | "
              f"{fell_back}/{runs} | {covered['steinke']}/{runs} | {covered['fdp']}/{runs} | "
              f"{np.median(found['headline']):.3f} | {time.perf_counter() - started:.0f} |", flush=True)
    print()


def run_key(name: str) -> int:
    """A seed component from a law's name (stable across Python runs, unlike hash())."""
    return sum(ord(c) * 31**i for i, c in enumerate(name)) % 2**32


def _cell(kind: str, fixed: dict, eps: float | None = None) -> str:
    """A cell's name: the law, its fixed parameters and the exact eps."""
    return kind + "".join(f", {k} {v:g}" for k, v in fixed.items()) + ("" if eps is None else f", eps {eps:g}")


def _allowed(runs: int, cells: int) -> int:
    """The most misses of `runs` that a 95% coverage explains at level 0.05 / cells (binomial quantile)."""
    from scipy import stats

    return int(stats.binom.ppf(1 - 0.05 / cells, runs, 0.05))


def gaussian_coverage(runs: int, m: int = 1000) -> None:
    print(f"## Coverage of the Gaussian estimator alone, {runs} runs per eps (m = {m}, delta = {DELTA:g})\n")
    print("| eps | eps_lo <= eps | standard error | model rejected |")
    print("|---|---|---|---|")
    for eps in (1.0, 2.0, 4.0, 8.0):
        covered = rejected = 0
        for child in np.random.SeedSequence(int(eps * 1000) + 1).spawn(runs):
            estimate = gaussian.estimate(*idealized.draw(m, eps, DELTA, np.random.default_rng(child)), DELTA, ALPHA)
            covered += estimate.eps_lo <= eps
            rejected += estimate.details["rejected"] is not None
        share = covered / runs
        print(f"| {eps:g} | {covered}/{runs} = {share:.1%} | {np.sqrt(share * (1 - share) / runs):.1%} | "
              f"{rejected}/{runs} |")
    print()


def tightness(runs: int) -> None:
    print(f"## Tightness: median eps_lo against the number of canaries m (idealized, delta = {DELTA:g}, {runs} runs)\n")
    print("| eps | m | steinke | fdp | gaussian | ceiling steinke | ceiling fdp | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for eps in (4.0, 8.0):
        for m in (100, 300, 1000, 3000, 10_000):
            started = time.perf_counter()
            found = idealized.idealized_eps_lo(m, eps, DELTA, ALPHA, runs, seed=m + int(eps))
            medians = " | ".join(f"{np.median(found[method]):.3f}" for method in METHODS)
            print(f"| {eps:g} | {m} | {medians} | {steinke.ceiling(m, DELTA, ALPHA):.3f} | "
                  f"{fdp.ceiling(m, DELTA, ALPHA):.3f} | {time.perf_counter() - started:.0f} |")
    print()


def training() -> None:
    from ndis.experiments import one_run_opacus

    print("## Real training: Opacus DP-SGD on digits, 1000 Dirac canaries, 100 full-batch steps, one run each\n")
    print("| claimed eps (Opacus PRV) | exact eps | bug | steinke | fdp | gaussian | idealized gaussian | "
          "d_hat | model rejected | accuracy | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for eps, bug in ((2.0, None), (4.0, None), (8.0, None), (2.0, "no-clip")):
        started = time.perf_counter()
        report = one_run_opacus.run(eps, 1000, DELTA, steps=100, bug=bug, seed=int(eps) + 10 * (bug is not None),
                                    compare=True)
        seconds = time.perf_counter() - started
        accountant, g = report.info["accountant"], report.estimates["gaussian"].details
        bounds = " | ".join(f"{report.estimates[method].eps_lo:.3f}{' *' if report.refutes_claim(method) else ''}"
                            for method in METHODS)
        print(f"| {accountant['eps']:.3f} | {accountant['exact_eps']:.3f} | {bug or '-'} | {bounds} | "
              f"{report.idealized['median']['gaussian']:.3f} | {g['d_hat']:.3f} | {g['rejected'] is not None} | "
              f"{report.info['training_accuracy']:.3f} | {seconds:.0f} |")
    print("\n(* eps_lo above the claimed eps: the claim is refuted)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="seeded runs per coverage cell (default 100)")
    parser.add_argument("--law", default="", metavar="TEXT",
                        help="laws: only the cells whose name contains TEXT, e.g. 'clipped-sums, steps 20' or 'eps 8'")
    parser.add_argument("--tightness-runs", type=int, default=10, help="seeded runs per tightness cell (default 10)")
    parser.add_argument("--gaussian-runs", type=int, default=1000,
                        help="seeded runs per eps of the Gaussian estimator's own coverage (default 1000)")
    parser.add_argument("--only", nargs="+", choices=("laws", "gaussian", "tightness", "training"),
                        default=["laws", "gaussian", "tightness", "training"])
    args = parser.parse_args()
    started = time.perf_counter()
    if "laws" in args.only:
        law_coverage(args.runs, only=args.law)
    if "gaussian" in args.only:
        gaussian_coverage(args.gaussian_runs)
    if "tightness" in args.only:
        tightness(args.tightness_runs)
    if "training" in args.only:
        training()
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
