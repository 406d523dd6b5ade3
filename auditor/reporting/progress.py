"""Progress of an audit: every phase counted in samples (tqdm bars on a terminal, else one summary
line per phase and one every `PULSE` seconds of a long one), and the interruption that says what was
completed."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable

#: In mode "lines", a phase running longer gets a line (samples so far) every PULSE seconds.
PULSE = 10.0


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during an audit; the message says which phase was under way and what was completed, and
    `partial` is the partial report (`reporting.report.partial_report`), or None."""

    def __init__(self, message: str = "", partial: dict | None = None):
        super().__init__(message)
        self.partial = partial


class Progress:
    """Progress of an audit's phases: tqdm bars counting samples (mode "bars"), lines (mode "lines": one
    summary line per phase, with samples, seconds and rate, and one every `PULSE` seconds while a phase
    runs longer) or nothing (mode None). Lines and notes go to `write` (default: stderr).

    A phase opened inside another (the screen's pilot audits) counts in the outer one. The phases
    done and the one under way are kept, so that an interruption can say what was completed.
    """

    def __init__(self, mode: str | None = None, write: Callable[[str], None] | None = None):
        if mode not in (None, "bars", "lines"):
            raise ValueError(f"progress mode must be None, 'bars' or 'lines', got {mode!r}")
        self.mode, self.done, self.current, self.stopped = mode, [], None, None
        self.write = write or _stderr

    @classmethod
    def auto(cls, progress) -> "Progress":
        """From audit's `progress`: None = bars on a terminal or in a notebook, else lines; True = bars;
        False = nothing; a mode name; or a callable, which gets the lines (mode "lines")."""
        if progress is None:
            interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
            return cls("bars" if interactive else "lines")
        if isinstance(progress, bool):
            return cls("bars" if progress else None)
        if callable(progress):
            return cls("lines", write=progress)
        return cls(progress)

    @contextlib.contextmanager
    def phase(self, name: str, total: int, unit: str = "samples"):
        """Yields advance(k), to call as k more `unit` are done."""
        if self.current is not None:
            outer = self.current
            yield (lambda k: self._advance(outer, k)) if unit == outer["unit"] else (lambda k: None)
            return
        started = time.perf_counter()
        bar = _NoBar()
        if self.mode == "bars":  # tqdm.auto imports asyncio and more: 0.1 s that lines and silence need not pay
            from tqdm.auto import tqdm

            bar = tqdm(total=total, desc=name, unit=unit.rstrip("s"), unit_scale=unit == "samples", leave=True,
                       smoothing=0.1)
        self.current = current = {"name": name, "unit": unit, "total": int(total), "count": 0, "bar": bar,
                                  "started": started, "told": started}
        try:
            yield lambda k: self._advance(current, k)
        except BaseException:
            self.stopped = current
            raise
        finally:
            bar.close()
            count, self.current = current["count"], None
        seconds = time.perf_counter() - started
        self.done.append({"phase": name, "unit": unit, "count": count, "seconds": seconds})
        if self.mode == "lines":
            rate = f" ({count / seconds:,.0f} {unit}/s)" if unit == "samples" and seconds > 0 else ""
            units = unit[:-1] if count == 1 else unit
            self.write(f"ndis: {name}: {count:,} {units} in {seconds:.1f} s{rate}")

    def note(self, text: str):
        """One line, unless silent."""
        if self.mode is not None:
            self.write(f"ndis: {text}")

    def _advance(self, phase: dict, k: int):
        phase["count"] += k
        phase["bar"].update(k)
        if self.mode == "lines" and time.perf_counter() - phase["told"] >= PULSE:
            phase["told"] = time.perf_counter()
            self.write(f"ndis: {phase['name']}: {phase['count']:,} of {phase['total']:,} {phase['unit']} so far, "
                       f"{phase['told'] - phase['started']:.0f} s")

    def sampling_rate(self) -> float | None:
        """Samples per second over the sampling phases done (both sides), or None before any."""
        timed = [p for p in self.done if p["unit"] == "samples"]
        seconds = sum(p["seconds"] for p in timed)
        return sum(p["count"] for p in timed) / seconds if seconds > 0 else None

    def summary(self) -> str:
        """What was under way and what was completed, in one line."""
        c = self.current or self.stopped
        if c is not None:
            text = f"during {c['name']} after {c['count']:,} of {c['total']:,} {c['unit']}"
        else:
            text = f"after {self.done[-1]['phase']}" if self.done else "before sampling started"
        done = [f"{p['phase']} ({p['count']:,} {p['unit']})" for p in self.done]
        return text + ("; completed: " + ", ".join(done) if done else "; no phase was completed")


def _stderr(line: str):
    print(line, file=sys.stderr, flush=True)


class _NoBar:
    """The part of a tqdm bar that `Progress` uses, doing nothing (modes "lines" and None)."""

    def update(self, k):
        pass

    def close(self):
        pass
