"""The family of audits of one pytest session: its error budget, seeds, records and Holm's step-down.

The pytest plugin (`ndis.testing.plugin`) counts, when collection is done, the K audits the
session's tests declare (a test marked `@pytest.mark.dp_audit(audits=m)` counts m, a test using the
`assert_dp` fixture counts 1) and gives each the level alpha / K. Each audit is a sequential audit
(`ndis.auditor.sequential`) whose verdict is valid at its level over its stopping time, with a
p-value p_i (P(p_i <= x) <= x when its claim holds). So

* a test fails when p_i <= alpha / K; by the union bound (Bonferroni), the probability that any
  audit of a mechanism meeting its claim fails is at most alpha, however the audits depend on each
  other;
* at the end of the session Holm's (1979) step-down runs over all K p-values (1 for audits that did
  not run): sorted p_(1) <= ... <= p_(K), it rejects p_(1), ..., p_(j) for the largest run with
  p_(i) <= alpha / (K - i + 1). Its first step is the tests' own criterion, so it names every failed
  test and, once one has failed, possibly more: "session-level failures", reported beside the failed
  tests. Holm's family-wise error is at most alpha under any dependence, so the guarantee above holds
  for the failed tests and the session-level failures together.

Seeds: every audit's seed is derived from the session seed and the test's node id (and the audit's
index within the test), so a session seed replays the whole session and a test's seed replays its
audit. A test rerun in the session (pytest-rerunfailures) replays the same seeds, and only its last
attempt's records count (`Family.enter`). The session seed is --ndis-seed, else $NDIS_SEED, else 0 on a CI runner ($CI set, as on
GitHub Actions), else fresh entropy; it is recorded in the summary.

Nothing here imports more than the standard library: the plugin that imports it is loaded in every
pytest session where ndis is installed.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import pathlib
import secrets
import tempfile
from dataclasses import dataclass, field

DEFAULT_ALPHA = 0.05
#: The session seed on a CI runner when none is given: CI runs are then the same every time.
CI_SEED = 0

_CURRENT: contextvars.ContextVar = contextvars.ContextVar("ndis_testing_slot", default=None)
_ACTIVE: list = []  # the families of the running sessions (a pytest session may run another inside it)


class UndeclaredAudit(ValueError):
    """A test made more audits than it declared (`@pytest.mark.dp_audit(audits=m)`)."""


def session_seed(option: int | None, environ=os.environ) -> tuple[int, str]:
    """(seed, where it came from): --ndis-seed, $NDIS_SEED, 0 on CI, or fresh entropy."""
    if option is not None:
        return int(option), "--ndis-seed"
    if environ.get("NDIS_SEED", "").strip():
        try:
            return int(environ["NDIS_SEED"]), "NDIS_SEED"
        except ValueError:
            raise ValueError(f"NDIS_SEED must be an integer, got {environ['NDIS_SEED']!r}") from None
    if environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return CI_SEED, "CI"
    return secrets.randbits(63), "fresh entropy"


def test_seed(session: int, nodeid: str, index: int) -> int:
    """The seed of audit `index` of the test `nodeid`: 63 bits of SHA-256 of (session seed, node id, index)."""
    digest = hashlib.sha256(f"{session}\x00{nodeid}\x00{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def holm(p_values: list[float], alpha: float, size: int) -> list[int]:
    """Indices of `p_values` rejected by Holm's step-down at family-wise level alpha over `size`
    hypotheses (len(p_values) <= size; the missing ones count as p = 1)."""
    if len(p_values) > size:
        raise ValueError(f"{len(p_values)} p-values for a family of {size}")
    rejected = []
    for rank, index in enumerate(sorted(range(len(p_values)), key=lambda i: p_values[i])):
        if p_values[index] > alpha / (size - rank):
            break
        rejected.append(index)
    return rejected


@dataclass(eq=False)
class Family:
    """The audits of a session: `declared` = {node id: audits declared}, K = their sum."""

    alpha: float
    seed: int
    seed_source: str
    declared: dict
    records: list = field(default_factory=list)
    holm_rejected: list = field(default_factory=list)
    holm: bool = True

    def __post_init__(self):
        if not 0 < self.alpha < 1:
            raise ValueError(f"--ndis-alpha must lie in (0, 1), got {self.alpha}")

    @property
    def size(self) -> int:
        return sum(self.declared.values())

    @property
    def level(self) -> float:
        """Each audit's level: alpha / K (Bonferroni)."""
        return self.alpha / self.size

    def activate(self):
        _ACTIVE.append(self)

    def deactivate(self):
        if self in _ACTIVE:
            _ACTIVE.remove(self)

    def enter(self, nodeid: str):
        """Make `nodeid` the running test (a token for `leave`). A test that runs again in the session (a
        failed test rerun by pytest-rerunfailures or any rerun hook) starts afresh: its audits get the
        same seeds again and the records of its earlier attempt are dropped, so that each declared audit
        counts once, with the last attempt's record: the attempt whose outcome pytest reports, and, the
        seed being the same, the same audit (unless the mechanism ignores the seed)."""
        self.records = [record for record in self.records if record["test"] != nodeid]
        return _CURRENT.set(Slot(self, nodeid))

    @staticmethod
    def leave(token):
        _CURRENT.reset(token)

    def finish(self) -> list[dict]:
        """Run Holm over the K audits; returns the records it rejects that did not fail their test."""
        if not self.holm:
            return []
        rejected = holm([r["p_value"] for r in self.records], self.alpha, self.size)
        self.holm_rejected = [self.records[i] for i in rejected if not self.records[i]["failed"]]
        for record in self.holm_rejected:
            record["session_failure"] = True
        return self.holm_rejected

    def summary(self) -> dict:
        failed = [r for r in self.records if r["failed"]]
        return {"alpha": self.alpha, "audits_declared": self.size, "level_per_audit": self.level,
                "session_seed": self.seed, "seed_source": self.seed_source, "holm": self.holm,
                "guarantee": ("if every audited mechanism meets its claim, the probability that any test fails or "
                              "that Holm's step-down names any audit is at most alpha"),
                "audits_run": len(self.records), "failed": len(failed), "session_failures": len(self.holm_rejected),
                "audits": self.records}

    def write_summary(self, path) -> pathlib.Path:
        """The summary as JSON at `path`, written atomically (a temporary file renamed over it)."""
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(self.summary(), out, indent=2, allow_nan=False)
                out.write("\n")
            os.replace(temporary, path)
        except BaseException:
            pathlib.Path(temporary).unlink(missing_ok=True)
            raise
        return path


@dataclass
class Slot:
    """The running test's place in the family: its level, and the seed of each audit it makes."""

    family: Family
    nodeid: str
    used: int = 0

    @property
    def level(self) -> float:
        return self.family.level

    def next_seed(self) -> int:
        """The seed of the test's next audit; UndeclaredAudit beyond the declared number."""
        __tracebackhide__ = True  # pytest's traceback of an UndeclaredAudit ends at the test's call
        allowed = self.family.declared[self.nodeid]
        if self.used >= allowed:
            raise UndeclaredAudit(f"{self.nodeid} declared {allowed} audit(s) and makes another; declare them all "
                                  f"with @pytest.mark.dp_audit(audits={self.used + 1}) so that the session's error "
                                  "budget counts them")
        self.used += 1
        return test_seed(self.family.seed, self.nodeid, self.used - 1)

    def record(self, entry: dict):
        self.family.records.append({"test": self.nodeid, "index": self.used - 1, **entry})


def current() -> Slot | None:
    """The running test's slot when the plugin counts it, else None."""
    return _CURRENT.get()


def active() -> Family | None:
    """The running session's family when the plugin counted audits in it, else None."""
    return _ACTIVE[-1] if _ACTIVE else None
