"""OpenDP measurements (`opendp.prelude`) as ndis mechanisms, and the uses audited at OpenDP's own claims.

`from_measurement(m)` wraps a Measurement: each sample is `m(data)` (per-sample, one library call per
output), or, with `elementwise=True` for a measurement that adds independent noise to each entry of
a vector (OpenDP's `make_laplace` / `make_gaussian` on a `vector_domain`), n samples are one call
on the input repeated n times (measured here: 35 us per Laplace sample, against 140 us per call).

OpenDP draws its noise from the operating system's randomness and cannot be seeded: the audit's rng
is not used, so an audit is valid (its samples are independent draws of the mechanism) but not
bit-reproducible. Measurements hold C pointers and do not pickle: audit them with n_jobs=1.
Importing this module enables OpenDP's "contrib" features (`dp.enable_features("contrib")`), which
OpenDP's measurement constructors require: whoever imports an OpenDP adapter builds measurements.

The claims are read from OpenDP itself: `m.map(d_in)` for pure DP (MaxDivergence), and for zCDP
(rho) OpenDP's own conversion `make_zCDP_to_approxDP(m).map(d_in).epsilon(delta)` at a stated delta.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import opendp.prelude as dp
from numpy.typing import ArrayLike

from . import LibraryCase

dp.enable_features("contrib")

NOT_SEEDED = "OpenDP draws from the OS and cannot be seeded: valid, not bit-reproducible"
DELTA = 1e-5  # the delta at which zCDP claims are converted to (eps, delta)


class MeasurementMechanism:
    """An OpenDP Measurement as an ndis mechanism: `sample(data, n, rng)` -> (n, k) float array.

    data : what the measurement takes (a number, a vector, or a dataset as an (n, 1) array), passed as
        a Python value of the measurement's carrier type. rng : unused (OpenDP cannot be seeded).
    neighbor : the ndis relation under which D and D' are checked (e.g. "remove" for OpenDP's
        symmetric distance 1), or None for query vectors.
    """

    def __init__(self, measurement: dp.Measurement, elementwise: bool = False, name: str = "opendp",
                 neighbor: str | None = None, params: dict[str, Any] | None = None) -> None:
        carrier = str(measurement.input_carrier_type)
        if elementwise and not carrier.startswith("Vec<"):
            raise ValueError(f"elementwise=True needs a measurement on a vector domain, not on {carrier}")
        self.measurement, self.elementwise, self.name = measurement, elementwise, name
        self.neighbor, self.params = neighbor, dict(params or {})
        self._vector = carrier.startswith("Vec<")
        self._element = int if carrier.strip("Vec<>")[0] in "iu" else float

    def _argument(self, data: ArrayLike) -> Any:
        values = np.asarray(data).ravel()
        if not self._vector:
            if values.size != 1:
                raise ValueError(f"the measurement takes one number ({self.measurement.input_carrier_type}); "
                                 f"got data of shape {np.shape(data)}")
            return self._element(values[0])
        return [self._element(v) for v in values]

    def sample(self, data: ArrayLike, n: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """n independent outputs of the measurement on `data` (rng unused: OpenDP cannot be seeded)."""
        argument = self._argument(data)
        if self.elementwise:
            out = np.asarray(self.measurement(argument * n), dtype=float)
            if out.size != n * len(argument):
                raise ValueError(f"elementwise=True, but the measurement returned {out.size} values for "
                                 f"{n * len(argument)} inputs; it does not act entry by entry")
            return out.reshape(n, len(argument))
        return np.asarray([np.ravel(self.measurement(argument)) for _ in range(n)], dtype=float)


def from_measurement(measurement: dp.Measurement, elementwise: bool = False, name: str = "opendp",
                     neighbor: str | None = None) -> MeasurementMechanism:
    """An OpenDP Measurement as a mechanism `ndis.auditor.audit` accepts (see `MeasurementMechanism`)."""
    return MeasurementMechanism(measurement, elementwise, name, neighbor)


def claim(measurement: dp.Measurement, d_in: Any, delta: float = DELTA) -> tuple[float, float]:
    """(eps, delta) OpenDP states for `measurement` at input distance d_in: `map(d_in)` for pure DP,
    OpenDP's zCDP -> approximate-DP conversion at `delta` for zCDP, the measurement's own pair for
    approximate DP."""
    measure = str(measurement.output_measure)
    if measure.startswith("MaxDivergence"):
        return float(measurement.map(d_in)), 0.0
    if measure.startswith("ZeroConcentratedDivergence"):
        return float(dp.c.make_zCDP_to_approxDP(measurement).map(d_in).epsilon(delta)), float(delta)
    if measure.startswith("Approximate"):
        eps, delta = measurement.map(d_in)
        return float(eps), float(delta)
    raise ValueError(f"no (eps, delta) claim for the output measure {measure}")


def _source(measurement: dp.Measurement) -> str:
    if str(measurement.output_measure).startswith("ZeroConcentrated"):
        return (f"rho = map(1) = {measurement.map(1.0):g}, converted by OpenDP's make_zCDP_to_approxDP at "
                f"delta = {DELTA:g}")
    return "eps = map(1)"


def _vector(T: type, metric: Callable[..., Any], noise: Callable[..., dp.Measurement],
            scale: float) -> dp.Measurement:
    atom = dp.atom_domain(T=T, nan=False) if T is float else dp.atom_domain(T=T)
    return noise(dp.vector_domain(atom), metric(T=T), scale=scale)


def composed(scale: float = 2.0, bounds: tuple[float, float] = (0.0, 1.0)) -> dp.Measurement:
    """clamp -> (sum + Laplace, count + discrete Laplace), composed by `make_composition`, on a dataset
    of floats under OpenDP's symmetric distance (add or remove one record)."""
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    clamp = dp.t.make_clamp(*space, bounds=bounds)
    total = clamp >> dp.t.then_sum() >> dp.m.then_laplace(scale=scale)
    count = clamp >> dp.t.then_count() >> dp.m.then_laplace(scale=scale)
    return dp.c.make_composition([total, count])


def cases() -> list[LibraryCase]:
    """Laplace, Gaussian (zCDP, converted at delta = 1e-5), discrete Laplace, the continuous two probed
    through their floating-point grid (features="float-grid"), a composed measurement, and one planted
    misuse (a Laplace calibrated for sensitivity 1 on a query that moves by 2)."""
    out: list[LibraryCase] = []
    for name, T, metric, noise, scale, n in (
            ("laplace", float, dp.l1_distance, dp.m.make_laplace, 1.0, 200_000),
            ("gaussian", float, dp.l2_distance, dp.m.make_gaussian, 4.0, 100_000),
            ("discrete laplace", int, dp.l1_distance, dp.m.make_laplace, 1.0, 200_000)):
        m = _vector(T, metric, noise, scale)
        out.append(LibraryCase("opendp", name, MeasurementMechanism(m, True, f"opendp {name}", params={"scale": scale}),
                               np.array([T(0)]), np.array([T(1)]), claim(m, T(1)), n_samples=n,
                               note=f"query pair differing by 1 (the sensitivity); claim {_source(m)}; {NOT_SEEDED}",
                               params={"scale": scale}))
    for name, metric, noise, scale in (("laplace", dp.l1_distance, dp.m.make_laplace, 1.0),
                                       ("gaussian", dp.l2_distance, dp.m.make_gaussian, 4.0)):
        m = _vector(float, metric, noise, scale)
        out.append(LibraryCase("opendp", f"{name}, floating-point grid", MeasurementMechanism(
            m, True, f"opendp {name}", params={"scale": scale}), np.array([1.0]), np.array([2.0]), claim(m, 1.0),
            n_samples=100_000, features="float-grid", params={"scale": scale},
            note=f"floating-point probe: answers 1 and 2 (q + noise reaches other doubles near 1 than near 2 when "
                 f"the noise is added in floating point); {NOT_SEEDED}"))
    m = composed()
    D = np.array([[0.2], [0.5], [0.9], [0.4], [1.0], [0.7], [0.1], [0.3]])
    out.append(LibraryCase("opendp", "clamp+sum+count, composed", MeasurementMechanism(
        m, name="opendp composition", neighbor="remove", params={"scale": 2.0}), D, np.delete(D, 4, axis=0),
        claim(m, 1), n_samples=50_000,
        note=f"make_composition of clamp>>sum>>Laplace(2) and clamp>>count>>Laplace(2); D' = D without the record 1.0 "
             f"(symmetric distance 1); per-sample (one call per output); {NOT_SEEDED}", params={"scale": 2.0}))
    m = _vector(float, dp.l1_distance, dp.m.make_laplace, 1.0)
    out.append(LibraryCase("opendp", "laplace, wrong sensitivity", MeasurementMechanism(
        m, True, "opendp laplace", params={"scale": 1.0}), np.array([0.0]), np.array([2.0]), claim(m, 1.0),
        planted=True, n_samples=100_000,
        note=f"planted: Laplace built for sensitivity 1 (claims map(1)) on a query whose answers differ by 2 "
             f"(true eps = 2); {NOT_SEEDED}", params={"scale": 1.0, "sensitivity": 2.0}))
    return out
