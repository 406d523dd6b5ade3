"""Progress of an audit (auditor.reporting.progress): in mode "lines" a line per phase, and one every
PULSE seconds while a phase runs longer, written to a callable when the audit's `progress` is one."""

from ndis.auditor.reporting import progress


def _phase(shown: progress.Progress):
    with shown.phase("held-out samples on D", 300) as advance:
        for _ in range(3):
            advance(100)


def test_a_long_phase_gets_a_line_every_pulse_and_a_callable_gets_the_lines(monkeypatch):
    lines = []
    shown = progress.Progress.auto(lines.append)
    assert shown.mode == "lines"
    _phase(shown)  # a phase shorter than PULSE: its summary line only
    assert len(lines) == 1 and lines[0].startswith("ndis: held-out samples on D: 300 samples in ")
    monkeypatch.setattr(progress, "PULSE", 0.0)  # every advance is PULSE seconds after the last line
    lines.clear()
    _phase(shown)
    assert [line.partition(" so far")[0] for line in lines[:3]] == [
        f"ndis: held-out samples on D: {k:,} of 300 samples" for k in (100, 200, 300)]
    assert len(lines) == 4 and " samples in " in lines[3]
    shown.note("round 2 of 3")
    assert lines[-1] == "ndis: round 2 of 3"
