"""Progress of an audit: every phase counted in samples (tqdm bars on a terminal, else one summary
line per phase), and the interruption that says what was completed."""

from __future__ import annotations

import contextlib
import sys
import time


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during an audit; the message says which phase was under way and what was completed, and
    `partial` is the partial report (`reporting.report.partial_report`), or None."""

    def __init__(self, message: str = "", partial: dict | None = None):
        super().__init__(message)
        self.partial = partial


class Progress:
    """Progress of an audit's phases: tqdm bars counting samples (mode "bars"), one summary line per
    phase on stderr (mode "lines": samples, seconds, rate) or nothing (mode None).

    A phase opened inside another (the screen's pilot audits) counts in the outer one. The phases
    done and the one under way are kept, so that an interruption can say what was completed.
    """

    def __init__(self, mode: str | None = None):
        if mode not in (None, "bars", "lines"):
            raise ValueError(f"progress mode must be None, 'bars' or 'lines', got {mode!r}")
        self.mode, self.done, self.current, self.stopped = mode, [], None, None

    @classmethod
    def auto(cls, progress) -> "Progress":
        """From audit's `progress`: None = bars on a terminal or in a notebook, else lines; True = bars;
        False = nothing; or a mode name."""
        if progress is None:
            interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
            return cls("bars" if interactive else "lines")
        if isinstance(progress, bool):
            return cls("bars" if progress else None)
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
        self.current = current = {"name": name, "unit": unit, "total": int(total), "count": 0, "bar": bar}
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
            print(f"ndis: {name}: {count:,} {units} in {seconds:.1f} s{rate}", file=sys.stderr, flush=True)

    def note(self, text: str):
        """One line on stderr, unless silent."""
        if self.mode is not None:
            print(f"ndis: {text}", file=sys.stderr, flush=True)

    @staticmethod
    def _advance(phase: dict, k: int):
        phase["count"] += k
        phase["bar"].update(k)

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


class _NoBar:
    """The part of a tqdm bar that `Progress` uses, doing nothing (modes "lines" and None)."""

    def update(self, k):
        pass

    def close(self):
        pass
