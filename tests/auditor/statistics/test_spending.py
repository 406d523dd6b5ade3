"""The rounds and looks of a sequential audit (auditor.statistics.spending): the budget and alpha are
spent exactly, in the stated shares, and small budgets merge rounds or are refused."""

import pathlib
import re

import numpy as np
import pytest

from ndis.auditor.statistics import spending


@pytest.mark.parametrize("n", [4_000, 20_000, 50_000, 100_000, 123_457, 10**7])
def test_the_rounds_spend_the_budget_and_alpha_exactly(n):
    rounds = spending.schedule(n, 0.05)
    assert sum(r.samples for r in rounds) == n
    assert sum(r.level for r in rounds) == pytest.approx(0.05, rel=1e-12)
    for r in rounds:
        assert r.screen >= spending.MIN_SCREEN and r.confirm >= spending.MIN_CONFIRM
        assert all(a.confirm < b.confirm for a, b in zip(r.looks, r.looks[1:]))
        assert all(look.level > 0 for look in r.looks)


def test_the_shares_and_the_quadratic_spending_at_the_default_budget():
    rounds = spending.schedule(100_000, 0.05)
    assert [r.samples for r in rounds] == [2_500, 7_500, 90_000]  # 2.5%, 7.5%, 90% of the budget
    assert [r.screen for r in rounds] == [1_000, 3_000, 22_500]
    looks = [look for r in rounds for look in r.looks]
    assert [look.confirm for look in looks] == [1_500, 4_500, 22_500, 67_500]
    drawn = np.array([1_500, 6_000, 28_500, 73_500]) / 73_500  # t: the share of confirmation samples drawn
    assert np.allclose([look.level for look in looks], 0.05 * np.diff(drawn**2, prepend=0.0), rtol=1e-12)


def test_a_small_budget_merges_the_first_rounds_into_the_next():
    assert len(spending.schedule(50_000, 0.05)) == 2  # 2.5% of 50,000 leaves 500 < 1,000 to screen
    (only,) = spending.schedule(20_000, 0.05)
    assert (only.screen, only.confirm, len(only.looks)) == (5_000, 15_000, 2)


@pytest.mark.parametrize("n, alpha, match", [(3_999, 0.05, "at least 4,000"), (1e5, 0.05, "integer"),
                                             (100_000, 0.0, "alpha"), (100_000, 1.0, "alpha")])
def test_bad_budgets_and_levels_are_refused(n, alpha, match):
    with pytest.raises(ValueError, match=match):
        spending.schedule(n, alpha)


def _documented_schedules():
    """The rows of docs/testing/README.md's table of rounds and looks: (smallest n, largest n or None,
    round shares, looks, alpha shares), the shares as printed."""
    docs = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "testing" / "README.md").read_text()
    row = r"^\| (?:from )?([0-9,]+)(?: to ([0-9,]+))? \| ([^|]+) \| (\d) \| ([^|]+) \|$"
    return [(int(low.replace(",", "")), int(high.replace(",", "")) if high else None, rounds.split(", "), int(looks),
             alphas.split(", ")) for low, high, rounds, looks, alphas in re.findall(row, docs, flags=re.M)]


def test_the_documented_rounds_and_looks_are_the_schedule():
    # docs/testing/README.md states the rounds, looks and alpha shares for every budget; the table is read
    # and checked at both ends of each row (each share to the digits printed), and below the first row
    # the budget is refused
    rows = _documented_schedules()
    assert [row[1] is None for row in rows] == [False] * (len(rows) - 1) + [True] and len(rows) >= 3
    with pytest.raises(ValueError, match="at least"):
        spending.schedule(rows[0][0] - 1, 0.05)
    for (low, high, shares, looks, alphas), following in zip(rows, rows[1:] + [None]):
        assert following is None or following[0] == high + 1
        for n in (low, high or 10**7):
            rounds = spending.schedule(n, 0.05)
            printed = [float(share.rstrip("%")) for share in shares]
            assert np.allclose([100 * r.samples / n for r in rounds], printed, rtol=1e-3)
            levels = [look.level for r in rounds for look in r.looks]
            assert len(levels) == looks and len(alphas) == looks
            for level, text in zip(levels, alphas):
                digits = len(text.rstrip("%").partition(".")[2])
                assert abs(100 * level / 0.05 - float(text.rstrip("%"))) <= 0.5 * 10**-digits + 1e-9
