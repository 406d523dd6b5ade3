"""Membership guesses with abstention, from canary scores alone (Steinke, Nasr & Jagielski 2023, the
auditor of their Algorithm 1: guess "in" for the k+ highest scores, "out" for the k- lowest, abstain
on the rest).

The bounds of `steinke` and `fdp` require guesses that depend on the scores only, never on the coin
flips. Tied scores leave the guesses undetermined: which of several canaries with the same score is
among the k highest? Breaking ties by row order is not allowed (rows sorted by the coin flips, as a
CSV sorted by `included` is, would then carry the flips into the guesses). Here ties are broken
*against* the certificate: within a tied block the guesses take the canaries that make them wrong
first. The count of right guesses is then the least over all tie-breakings, a deterministic function
of the multiset of (score, coin flip) pairs, so it does not depend on the rows' order; and it is at
most the count of any tie-breaking that ignores the flips (a fixed or a random one), so every bound
computed from it holds with at least the confidence of that tie-breaking's (the bounds grow with the
right count). Without ties it is the count of the unique ordering.

The number of guesses is not tuned on the outcome: a bound is computed for each k of the fixed grid
`sizes(m)` (k+ = k- = k, halving from m/2) at level alpha / len(grid), and the largest is kept, a
Bonferroni correction that keeps the 1 - alpha confidence whatever k wins.
"""

from __future__ import annotations

from collections.abc import Callable

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
    guessed out) are right, ties broken against the guesses (module docstring).

    From the top, a tied block lists its left-out canaries first (a wrong "in" guess); from the
    bottom, its included ones first (a wrong "out" guess). One tie-breaking attains both least
    counts at once: a block that both sides reach gives them j and j' of its canaries with
    j + j' at most its size (k <= m / 2), and taking the wrong picks first on each side never asks
    for more canaries of one kind than the block holds."""
    from_top = included[np.lexsort((included, -scores))]        # highest score first; left out first in a tie
    from_bottom = included[np.lexsort((~included, scores))]     # lowest score first; included first in a tie
    ks = np.asarray(ks, dtype=int)
    return np.cumsum(from_top)[ks - 1] + np.cumsum(~from_bottom)[ks - 1]


def nothing_certifiable(m: int, delta: float, alpha: float, ceiling: Callable[[int, float, float], float]) -> str:
    """The one-line reason a guess-based bound whose most is `ceiling(m, delta, alpha)` gives nothing on
    m canaries, with the fewest canaries on which it would when that is below 129."""
    fewest = next((n for n in range(m + 1, 129) if ceiling(n, delta, alpha) > 0), None)
    need = f"; it needs at least {fewest}" if fewest is not None else ""
    return (f"a guess-based bound certifies nothing on {m} canaries at alpha={alpha:g}, delta={delta:g}, even with "
            f"every guess right{need}")
