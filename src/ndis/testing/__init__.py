"""ndis in a test suite: `assert_dp` and the pytest plugin that controls errors over a session's audits.

    from . import assert_dp

    def test_my_mechanism(assert_dp):          # the plugin's fixture; or @pytest.mark.dp_audit
        assert_dp(my_mechanism, D, D_prime, eps=1.0, delta=1e-5)

`assert_dp` (`ndis.testing.assertions`) runs a sequential audit (`ndis.auditor.sequential`) that
stops as soon as the claim is refuted; it returns the AuditReport, or raises `PrivacyViolation`, an
AssertionError carrying the report and a message with the evidence and the seed that replays it.
The pytest plugin (`ndis.testing.plugin`, loaded by pytest through the `pytest11` entry point) counts
the session's audits and gives each the level alpha / K, so that the probability that any test of a
mechanism meeting its claim fails is at most alpha (`ndis.testing.family`); it adds the options
--ndis-alpha, --ndis-seed, --ndis-summary and --ndis-no-holm. See docs/testing/README.md.

The names are loaded on first use, so importing this package (as the plugin does in every pytest
session) imports no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the public names: followed by editors, loaded on first use (`ndis._lazy`)
    from .assertions import DEFAULT_SAMPLES, PrivacyViolation, UncountedAudit, assert_dp
    from .family import UndeclaredAudit, holm

__getattr__, __dir__, __all__ = attach(__name__, __file__)
