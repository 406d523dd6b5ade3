"""Randomized mechanisms: random projection, approximate least squares and the DP schemes built on
them (seeds 000, 004, 001), each with an exact fast sampler and the literal algorithm.

    from ndis import mechanisms
    mech = mechanisms.get("als", r=300)
    outputs = mech.sample(D, 10_000, rng)
"""

from .base import Mechanism
from .registry import describe, get, names, resolve

__all__ = ["Mechanism", "describe", "get", "names", "resolve"]
