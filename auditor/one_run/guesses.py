"""Membership guesses with abstention, from canary scores alone (Steinke, Nasr & Jagielski 2023, the
auditor of their Algorithm 1: guess "in" for the k+ highest scores, "out" for the k- lowest, abstain
on the rest).

The guesses depend on the scores and the canaries' order only, never on the coin flips, which is
what the bounds of `steinke` and `fdp` require. The number of guesses is not tuned on the outcome: a
bound is computed for each k of the fixed grid `sizes(m)` (k+ = k- = k, halving from m/2) at level
alpha / len(grid), and the largest is kept, a Bonferroni correction that keeps the 1 - alpha
confidence whatever k wins.
"""

from __future__ import annotations

import numpy as np

#: The smallest k of the grid: 2k = 8 guesses, all right, have probability 2^-8 by chance alone.
SMALLEST = 4


def sizes(m: int) -> np.ndarray:
    """Guesses per side, k = floor(m / 2), floor(m / 4), ..., down to `SMALLEST` (empty when m < 8)."""
    found = []
    k = m // 2
    while k >= SMALLEST:
        found.append(k)
        k = m // (2 ** (len(found) + 1))
    return np.array(found, dtype=int)


def correct_counts(scores: np.ndarray, included: np.ndarray, ks) -> np.ndarray:
    """For each k of `ks`: how many of the 2k guesses (the k highest scores guessed in, the k lowest
    guessed out) are right. Ties are broken by canary index (stable sort), not by the coin flips."""
    order = np.argsort(scores, kind="stable")
    ranked = included[order]                     # coin flips from the lowest score to the highest
    in_from_top = np.cumsum(ranked[::-1])        # included among the j highest, j = 1..m
    out_from_bottom = np.cumsum(~ranked)         # left out among the j lowest
    ks = np.asarray(ks, dtype=int)
    return in_from_top[ks - 1] + out_from_bottom[ks - 1]
