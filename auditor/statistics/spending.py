"""The rounds and looks of a sequential audit, and the confidence each look may spend (alpha spending).

A sequential audit (`auditor.sequential`) spends its budget of n samples per side in up to three
rounds of 2.5%, 7.5% and 90% of it. Each round screens (trains a score and chooses one event on
`SCREEN_SHARES` of the round's samples) and then confirms the event on fresh samples. The first two,
small rounds refute clear violations after 2.5% or 10% of the budget; the last one has most of the
samples and of the confidence, for the faint ones, and looks at its confirmation counts twice: after
a third of them (to stop early, refuting or futile) and at the end.

Each look k tests the event on all of its round's confirmation samples so far at level

    alpha_k = alpha * (f(t_k) - f(t_{k-1})),   f(t) = t^2,

t_k the share of all planned confirmation samples (of every round) drawn by look k: the power family
of alpha-spending functions of Kim & DeMets (1987) with rho = 2, in the sense of Lan & DeMets (1983).
Compared with the linear f(t) = t it keeps most of the confidence for the final look of the last
round, where the faint violations are decided (0.85 alpha instead of 0.61 alpha at the default
shares), and spends little early, where clear violations give p-values far below any level (the
first round still gets 4e-4 alpha). The alpha_k sum to alpha whatever the data, so the statements of
all the looks that are made, in rounds and at times chosen by the data, hold together with probability
>= 1 - alpha by a union bound (Bonferroni needs no independence: two looks at one round's growing
counts are correlated and still add up). A look that is not made spends nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: Shares of the budget of the rounds (their sum is 1).
ROUND_SHARES = (0.025, 0.075, 0.9)
#: Share of each round's samples that screen; the rest confirm.
SCREEN_SHARES = (0.4, 0.4, 0.25)
#: The last round looks at its confirmation counts after these shares of them.
LAST_LOOKS = (1 / 3, 1.0)
#: The exponent of the spending function t^RHO (Kim & DeMets 1987).
RHO = 2
#: Fewest samples per side of a screening audit and of a round's confirmation.
MIN_SCREEN, MIN_CONFIRM = 1_000, 500


@dataclass(frozen=True)
class Look:
    """A test of the round's event on its first `confirm` confirmation samples per side, at `level`."""

    confirm: int
    level: float


@dataclass(frozen=True)
class Round:
    """Round `index` (from 0): `screen` samples per side train a score and choose the event, which is
    tested at each of `looks` on the round's growing fresh samples; `level` = the looks' total."""

    index: int
    screen: int
    looks: tuple

    @property
    def confirm(self) -> int:
        return self.looks[-1].confirm

    @property
    def samples(self) -> int:
        return self.screen + self.confirm

    @property
    def level(self) -> float:
        return sum(look.level for look in self.looks)

    def to_dict(self) -> dict:
        return {"index": self.index, "screen": self.screen, "confirm": self.confirm, "level": self.level,
                "looks": [asdict(look) for look in self.looks]}


def _shares(n_samples: int) -> list[tuple[float, float]]:
    """[(share of the budget, screening share)] of the rounds that fit: a first round too small for a
    screening of MIN_SCREEN and a confirmation of MIN_CONFIRM samples is merged into the next."""
    rounds = list(zip(ROUND_SHARES, SCREEN_SHARES))
    while rounds:
        share, screen = rounds[0]
        if n_samples * share * screen >= MIN_SCREEN and n_samples * share * (1 - screen) >= MIN_CONFIRM:
            return rounds
        if len(rounds) == 1:
            return []
        rounds = [(share + rounds[1][0], rounds[1][1])] + rounds[2:]
    return []


def schedule(n_samples: int, alpha: float) -> list[Round]:
    """The rounds of a sequential audit of at most `n_samples` samples per side at level `alpha`
    (`ROUND_SHARES`, as many rounds as fit), the last one looking at `LAST_LOOKS`, with the
    spending of the module docstring."""
    if not isinstance(n_samples, int) or isinstance(n_samples, bool):
        raise ValueError(f"n_samples (per side) must be an integer, got {n_samples!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    shares = _shares(n_samples)
    if not shares:
        smallest = int(max(MIN_SCREEN / SCREEN_SHARES[-1], MIN_CONFIRM / (1 - SCREEN_SHARES[-1])))
        raise ValueError(f"a sequential audit needs at least {smallest:,} samples per side (one round: a screening "
                         f"audit of {MIN_SCREEN:,} and a confirmation), got n_samples={n_samples:,}")
    sizes = [int(n_samples * share) for share, _ in shares]
    sizes[-1] += n_samples - sum(sizes)
    plans = []
    for index, (size, (_, screen_share)) in enumerate(zip(sizes, shares)):
        screen = int(round(size * screen_share))
        fractions = LAST_LOOKS if index == len(sizes) - 1 else (1.0,)
        plans.append((index, screen, [int(round((size - screen) * f)) for f in fractions]))
    total = sum(looks[-1] for _, _, looks in plans)
    spent, rounds = 0, []
    for index, screen, looks in plans:
        shares = [spending_function((spent + c) / total) for c in [0] + looks]  # alpha spent by each look
        rounds.append(Round(index, screen, tuple(Look(c, alpha * (after - before))
                                                 for c, before, after in zip(looks, shares, shares[1:]))))
        spent += looks[-1]
    return rounds


def spending_function(t: float) -> float:
    """The share of alpha spent by information fraction t: t^RHO (Kim & DeMets 1987)."""
    return t**RHO
