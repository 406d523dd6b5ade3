"""Utility metrics of Lu et al. (2023, OLS-RP, NDIS) on tiny hand-checkable inputs."""

import numpy as np
import pytest

from ndis.mechanisms import utility

D = np.eye(2)                # columns e1, e2: ||D_1 - D_2|| = sqrt(2), D^T D = I


def test_pdr():
    S = np.sqrt(2.0) * np.eye(2)                     # r = 2: P = S / sqrt(2) = I, distances kept
    assert utility.pdr(D, S) == pytest.approx(1.0)
    assert np.allclose(utility.pdr(D, np.stack([S, 3 * S])), [1.0, 3.0])
    D3 = np.diag([1.0, 2.0, 3.0])
    S3 = np.diag([1.0, 2.0, 6.0])                    # r = 3, P = S3 / sqrt(3)
    ratios = [np.sqrt(5) / np.sqrt(5), np.sqrt(37) / np.sqrt(10), np.sqrt(40) / np.sqrt(13)]
    assert utility.pdr(D3, S3) == pytest.approx(np.mean(ratios) / np.sqrt(3))


def test_dpr_pearson_and_biased():
    S = np.diag([1.0, np.sqrt(3.0)])                 # S^T S = diag(1, 3): entries (1, 0, 0, 3) vs (1, 0, 0, 1)
    # centred: x = (.5, -.5, -.5, .5), y = (0, -1, -1, 2): x.y = 2, |x|^2 = 1, |y|^2 = 6
    assert utility.dpr(D, S) == pytest.approx(2 / np.sqrt(6))
    assert utility.dpr(D, S, biased=True) == pytest.approx(2 / np.sqrt(6) * 4 / 3)
    assert utility.dpr(D, 5 * S) == pytest.approx(2 / np.sqrt(6))      # scale-free
    assert np.allclose(utility.dpr(D, np.stack([S, np.eye(2)])), [2 / np.sqrt(6), 1.0])


def test_ls_error():
    assert utility.ls_error([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert np.allclose(utility.ls_error([[3.0, 4.0], [0.0, 0.0]], [3.0, 0.0]), [4 / 3, 1.0])
    with pytest.raises(ValueError, match="zero"):
        utility.ls_error([1.0], [0.0])


def test_trace_covariance():
    assert utility.trace_covariance([[0.0, 0.0], [2.0, 2.0]]) == pytest.approx(4.0)   # each variance (1+1)/1
    assert utility.trace_covariance(np.zeros((5, 2, 3))) == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        utility.trace_covariance([[1.0, 2.0]])


def test_shape_errors():
    with pytest.raises(ValueError, match="sketches must have shape"):
        utility.pdr(D, np.ones((4, 3)))
