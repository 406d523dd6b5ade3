"""`assert_dp`: a sequential audit of a privacy claim that raises AssertionError when the claim is refuted."""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np

from . import family, terminal

#: The most samples per side an assert_dp audit draws by default.
DEFAULT_SAMPLES = 100_000
#: The longest an assert_dp audit may be estimated to take, as `ndis.audit`'s `max_seconds`: the job of
#: docs/testing/github-actions.yml stops after 60 minutes, and the estimate is a lower bound (10^6 samples
#: per second per worker), so an audit estimated above it cannot finish there; n_samples=10**12 is
#: estimated at 11.6 days on 2 cores.
MAX_SECONDS = 3600.0


class PrivacyViolation(AssertionError):
    """The claim of an `assert_dp` is refuted; `report` is the sequential audit's AuditReport."""

    def __init__(self, message: str, report):
        super().__init__(message)
        self.report = report


class UncountedAudit(UserWarning):
    """assert_dp ran in a test the ndis pytest plugin does not count: outside the session's error budget."""


def _claim(eps, delta, claimed):
    """(what audit's `claimed` takes, its name) from exactly one of eps (with delta) or claimed."""
    __tracebackhide__ = True  # pytest shows the user's call, not ndis's frames (also in assert_dp, Slot.next_seed)
    if (eps is None) == (claimed is None):
        raise ValueError("give the claim as eps (with delta) or as claimed= (ndis.gaussian_dp(mu), or any privacy "
                         "curve ndis.audit takes), " + ("not both" if eps is not None else "got neither"))
    if eps is not None:
        from ..auditor.statistics.verdict import check_claim

        eps, delta = check_claim((eps, delta))
        return (eps, delta), f"({eps:g}, {delta:g})-DP"
    if delta != 0.0:
        raise ValueError("delta goes with eps; a claimed curve states its own deltas")
    from ..auditor.statistics import claims

    if claims.is_point_claim(claimed):
        eps, delta = claimed
        return _claim(eps, delta, None)
    curve = claims.claimed_curve(claimed)
    return curve, f"the claimed curve {curve.source}"


def assert_dp(mech, D, D_prime, eps: float | None = None, delta: float = 0.0, *, claimed=None,
              n_samples: int = DEFAULT_SAMPLES, alpha: float | None = None, seed=None, grid=None, scorer="auto",
              split=None, execution=None):
    """Audit `mech` on (D, D') sequentially against a claim; return the AuditReport when the claim stands,
    raise `PrivacyViolation` (an AssertionError whose `report` is the AuditReport) when it is refuted.

    Parameters
    ----------
    mech, D, D_prime : the mechanism and the pair, as for `ndis.audit`.
    eps, delta : the claim (eps, delta)-DP; or instead
    claimed : any claim `ndis.audit` takes: `ndis.gaussian_dp(mu)`, arrays (eps, delta), a CSV path, a
        callable, a dp_accounting accountant, ...
    n_samples : the most samples per side; the audit stops as soon as the claim is refuted, or when
        going on is futile (`ndis.auditor.sequential`), and `report.samples_used` says how many it drew.
    alpha, seed : level and seed. In a test the ndis pytest plugin counts (marked
        `@pytest.mark.dp_audit` or using the `assert_dp` fixture), the session's alpha / K and a seed
        derived from the session seed and the test's node id (`ndis.testing.family`); an `alpha`
        given there may not exceed alpha / K (a smaller one spends less of the session's budget).
        Elsewhere `alpha` (default 0.05) and `seed` (default fresh entropy). The failure message's
        "replay" line gives the level and the seed that replay the audit: added to the same call, in
        the same test (counted or not, also run alone), it runs as printed.
    grid : the eps grid of the screening audits, at whose points a curve is tested (default
        np.linspace(0, max(2, 2 eps), 41) for (eps, delta), else `ndis.audit`'s).
    scorer, split, execution : as for `ndis.audit`. Before any work the audit's cost is estimated as
        `ndis.audit` estimates it (`core.budget`: memory, and a lower bound on the time when the claim
        holds and every round runs to its end); an audit that needs more memory than is available, or
        more than `execution.max_seconds` (None, the default: `MAX_SECONDS`, an hour; math.inf: no limit),
        is refused with a one-line ValueError.

    Under pytest an audit that runs longer than --ndis-progress-after seconds (default 30) shows its
    progress on the terminal, without -s (`ndis.testing.terminal`); elsewhere it is silent. A failure
    shows no frame of ndis in pytest's traceback (`__tracebackhide__`): it ends at the test's call.
    """
    __tracebackhide__ = True
    claimed, name = _claim(eps, delta, claimed)
    slot = family.current()
    if slot is not None:
        if alpha is not None and alpha > slot.level:
            raise ValueError(f"alpha={alpha!r} is more than this test's share of the session's error budget, "
                             f"--ndis-alpha / K = {slot.family.alpha:g} / {slot.family.size} = {slot.level!r}: "
                             "remove alpha= (set the session's budget with --ndis-alpha)")
        alpha = slot.level if alpha is None else alpha
        test_seed = slot.next_seed()
        seed = test_seed if seed is None else seed
    else:
        alpha = family.DEFAULT_ALPHA if alpha is None else alpha
        if family.active() is not None:
            warnings.warn("assert_dp ran in a test the ndis pytest plugin does not count, so outside the session's "
                          "error budget: mark the test @pytest.mark.dp_audit or use the assert_dp fixture",
                          UncountedAudit, stacklevel=2)
    from ..auditor import Execution, audit_sequential

    execution = execution or Execution()
    if execution.max_seconds is None:
        execution = dataclasses.replace(execution, max_seconds=MAX_SECONDS)

    started = time.perf_counter()
    if grid is None and isinstance(claimed, tuple):  # the screening audits' curves: from 0 (where any audit can
        grid = np.linspace(0.0, max(2.0, 2 * claimed[0]), 41)  # certify) past eps
    report = audit_sequential(mech, D, D_prime, claimed=claimed, eps=grid, n_samples=n_samples, alpha=alpha, seed=seed,
                              scorer=scorer, split=split, execution=execution,
                              progress=terminal.progress(f"assert_dp of {name}") or False)
    refuted = report.verdict == "violation"
    if slot is not None:
        slot.record(_record(report, name, alpha, refuted, time.perf_counter() - started))
    if refuted:
        raise PrivacyViolation(message(report, name, alpha), report)
    return report


def _round(report) -> dict:
    """The record of the round that decided (`ndis.auditor.sequential`)."""
    return report.sequential["rounds"][-1]


def _replay(report, alpha) -> str:
    """The call that replays the audit, `...` standing for the test's own arguments: the exact level (a
    counted test accepts it, being at most the test's share in the session that printed it and in any
    session with fewer audits, such as the test run alone) and the seed."""
    seed = report.seed
    value = seed["entropy"] if not seed["spawn_key"] else f"numpy.random.SeedSequence({seed['entropy']}, " \
                                                          f"spawn_key={tuple(seed['spawn_key'])})"
    return f"assert_dp(..., alpha={float(alpha)!r}, seed={value})"


def _event(c: dict) -> str:
    """The tested event in words, with its counts and the estimate of P - e^eps Q."""
    e = c["event"]
    inside, numerator, other = (("score >= ", "D", "D'") if e["direction"] == "forward" else ("score < ", "D'", "D"))
    return (f"outputs with {inside}{e['threshold']:.6g}: {c['k_num']:,} of {c['n']:,} fresh outputs on {numerator}, "
            f"{c['k_den']:,} of {c['n']:,} on {other} (P - e^eps Q estimated at {c['estimate']:.4g} "
            f"+- {c['estimate_se']:.2g})")


def _up_to(c: dict) -> str:
    """"<=" when the confirmation `c` rejected eps_lo itself (a positive eps_lo is a rejected point of the
    grid, `statistics.difference.eps_lo`, and a refuted claim's own eps is rejected), else "<"."""
    return "<=" if c["eps_lo"] > 0 or (c["refuted"] and c["eps_lo"] == c["event"]["eps"]) else "<"


def message(report, name: str, alpha: float) -> str:
    """The failure message: the refuted claim, eps_lo, the event, the samples used and the replaying seed.
    The level and the p-value (<= it, `statistics.confirmation.combined_p_value`) are rounded alike, so
    the printed p-value is never above the printed level."""
    c = _round(report)["confirmation"]
    e, s = c["event"], report.sequential
    mechanism = report.mechanism
    return "\n".join([
        f"{name} of {mechanism} is refuted at level {alpha:.4g} (p = {s['p_value']:.4g})",
        f"  eps_lo = {c['eps_lo']:.4g}: not (eps, {e['delta']:g})-DP for any eps {_up_to(c)} {c['eps_lo']:.4g}; "
        f"delta({e['eps']:g}) >= {c['delta_lower']:.4g} > {e['delta']:g}",
        f"  event: {_event(c)}",
        f"  samples used: {s['samples_used']:,} per side of {s['budget']:,} ({s['reason']})",
        f"  replay: {_replay(report, alpha)}",
    ])


def _record(report, name, alpha, refuted, seconds) -> dict:
    """What the session summary keeps of one audit, JSON-ready (non-finite numbers as None)."""
    from ..auditor.reporting.report import _plain

    s, c = report.sequential, _round(report)["confirmation"]
    return _plain({"mechanism": report.mechanism, "claim": name, "level": alpha, "failed": refuted,
            "p_value": s["p_value"], "eps": c["event"]["eps"], "delta": c["event"]["delta"],
            "eps_lo": c["eps_lo"], "delta_lower": c["delta_lower"], "event": c["event"],
            "samples_used": s["samples_used"], "budget": s["budget"], "stopped": s["stopped"], "reason": s["reason"],
            "seed": report.seed, "seconds": seconds, "session_failure": False})
