"""The float-grid feature map (auditor.scoring.features.float_grid): the exact grid position of each output,
and the floating-point attack on a textbook Laplace mechanism (Mironov 2012) that it exposes."""

import numpy as np

from ndis.auditor import Scoring, audit
from ndis.auditor.scoring.features import float_grid
from ndis.mechanisms import zoo


def test_float_grid_reads_exponent_and_trailing_zero_bits():
    x = np.array([[1.0, 0.75, 0.5 + 2.0**-53, 0.0, -3.0, 2.0**-1074]])
    # 1 = 0.5 * 2^1 (significand 2^52); 0.75 = 3 * 2^51 / 2^53; 0.5 + 2^-53 has its last bit set;
    # 0 has no set bit (53); -3 = -0.75 * 2^2; the smallest subnormal has significand 2^52 at exponent -1073.
    assert float_grid(x).tolist() == [[1, 0, 0, 0, 2, -1073, 52, 51, 0, 53, 51, 52]]


def test_textbook_laplace_is_refuted_through_its_floating_point_grid():
    # q + Lap(5) with q = 1 reaches values in (1/2, 1) with any last bit; with q' = 2 only even multiples
    # of 2^-53 (2 + n is exact there): an event of probability 0 under D', so eps_lo far above the
    # mechanism's real-valued eps of 0.2 (with the usual features eps_lo stays below 0.2).
    mech = zoo.ZooLaplace(eps0=0.2)
    D, D_prime = mech.patterns(5)["one above"]
    report = audit(mech, D, D_prime, eps=[0.2, 2.0], n_samples=100_000, seed=3, claimed=(0.2, 0), progress=False,
                   scorer=Scoring(features="float-grid"))
    assert report.verdict == "violation" and report.eps_lo(0) > 3
