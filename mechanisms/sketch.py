"""The literal Gaussian sketch Pi [D; sigma I_d], the O(r n d) reference computation.

Pi has i.i.d. N(0, 1) entries (r x (n + d), or r x n when sigma == 0); it is drawn block by block
so that memory stays bounded at any n (Flight: r n = 3.9e8 entries per sketch). This is the
algorithm as Lu, Magdon-Ismail, Wei & Zikas (2023, OLS-RP, Fig. 1; 2023, NDIS, Fig. 3) write it;
the fast samplers reproduce its law from the Gram matrix alone.
"""

from __future__ import annotations

import numpy as np

from .base import CHUNK_FLOATS


def gaussian_sketch(D: np.ndarray, r: int, k: int, rng: np.random.Generator, sigma: float = 0.0) -> np.ndarray:
    """k independent sketches Pi [D; sigma I_d], shape (k, r, d).

    The appended rows contribute sigma * (the last d columns of Pi), i.e. an independent
    N(0, sigma^2) matrix added to Pi D (M_RP's D^T G + G', NDIS, Fig. 3)."""
    n, d = D.shape
    if k * r * n <= CHUNK_FLOATS:
        out = rng.standard_normal((k, r, n)) @ D
    else:
        out = np.zeros((k, r, d))
        rows = max(1, CHUNK_FLOATS // r)
        for s in range(k):
            for start in range(0, n, rows):
                block = D[start:start + rows]
                out[s] += rng.standard_normal((r, block.shape[0])) @ block
    if sigma > 0:
        out += sigma * rng.standard_normal((k, r, d))
    return out
