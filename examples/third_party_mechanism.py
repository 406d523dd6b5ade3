"""Auditing a third-party mechanism end to end.

`noisy_column_means` stands for code someone else wrote: it releases the column means of a dataset
whose entries lie in [0, 1], one release per call, with Gaussian noise. Its author claims
(eps, delta) = (1, 1e-5) under the replace-one relation, calibrating sigma with the analytic
Gaussian mechanism for sensitivity sqrt(d) / n, but ships `sigma_scale=0.25`, a debugging leftover.

The auditor only calls the function. Run from the repository root:

    python -m examples.third_party_mechanism            # prints the table, writes ndis-out/example

`main` audits the replace-one pair that realises the sensitivity (a corner row moved to the opposite
corner) and finds the violation. The command line audits the same function on the same pair: the
dataset of `main` is `examples/unit_square.csv`, and the replacement row is given explicitly:

    ndis audit examples.third_party_mechanism:noisy_column_means --data examples/unit_square.csv \
        --neighbor replace:0 --replacement 1,1 --claimed 1,1e-5 --scorer quadratic --samples 2e5
"""

from __future__ import annotations

import pathlib

import numpy as np

from ndis import theory
from ndis.auditor import Execution, audit, per_sample


DATA = pathlib.Path(__file__).with_name("unit_square.csv")
_SIGMA = {}


def calibrated_sigma(n: int, d: int) -> float:
    """The analytic-Gaussian sigma for (1, 1e-5) and sensitivity sqrt(d) / n (cached per shape)."""
    if (n, d) not in _SIGMA:
        _SIGMA[n, d] = float(theory.gaussian_sigma(1.0, 1e-5, np.sqrt(d) / n))
    return _SIGMA[n, d]


def noisy_column_means(data, rng, sigma_scale=0.25):
    """One release: the column means of data (entries in [0, 1]) plus N(0, sigma^2 I)."""
    data = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
    n, d = data.shape
    return data.mean(axis=0) + sigma_scale * calibrated_sigma(n, d) * rng.standard_normal(d)


def main(out="ndis-out/example", n_samples=200_000, n_jobs=2):
    D = np.loadtxt(DATA, delimiter=",", skiprows=1)  # 50 rows in the unit square, row 0 at the corner (0, 0)
    D_prime = D.copy()
    D_prime[0] = 1.0  # replacing a corner row by the opposite corner moves the means by the sensitivity
    # what the author's calibration promises vs what the shipped code does: mu = shift / sigma
    mu = np.sqrt(2) / 50 / (0.25 * calibrated_sigma(50, 2))
    mechanism = per_sample(noisy_column_means, exact=lambda eps: theory.gaussian_delta(eps, mu))
    report = audit(mechanism, D, D_prime, eps=np.linspace(0, 2, 41), n_samples=n_samples, seed=0, claimed=(1.0, 1e-5),
                   neighbor="replace", scorer="quadratic", execution=Execution(n_jobs=n_jobs))
    print(report.table())
    report.to_json(f"{out}/report.json")
    report.plot(f"{out}/spectrum.png", title="third-party noisy column means (sigma a quarter of the calibrated one)")
    return report


if __name__ == "__main__":
    main()
