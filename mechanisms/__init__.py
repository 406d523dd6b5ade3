"""Randomized mechanisms: random projection, approximate least squares and the DP schemes built on
them (Lu, Magdon-Ismail, Wei & Zikas 2023, OLS-RP and NDIS; Showkatbakhsh, Karakus & Diggavi 2018;
Ding et al. 2022; Burkhardt et al. 2025), each with an exact fast sampler and the literal algorithm.

    from .. import mechanisms
    mech = mechanisms.get("als", r=300)
    outputs = mech.sample(D, 10_000, rng)
"""

from .base import Mechanism
from .registry import describe, get, names, resolve

__all__ = ["Mechanism", "describe", "get", "names", "resolve"]
