"""The process's BLAS and OpenMP thread pools, limited for a block of code (threadpoolctl)."""

from __future__ import annotations

import functools
import sys
from contextlib import AbstractContextManager
from typing import Any


@functools.lru_cache(maxsize=1)
def _controller(modules: int) -> Any:  # threadpoolctl.ThreadpoolController (untyped)
    """threadpoolctl's controller of the thread pools loaded when `modules` modules were imported."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def thread_limit(threads: int | None) -> AbstractContextManager[Any]:
    """A context manager limiting the BLAS and OpenMP libraries of this process to `threads` threads
    (None: no limit), as `threadpoolctl.threadpool_limits` does, but with the libraries found once
    per process and again after new imports (finding them costs milliseconds, which a sampler or a
    scorer would pay per chunk). On exit the limits in force at entry come back, so nested limits of
    the same value, in any thread, leave that value in force."""
    return _controller(len(sys.modules)).limit(limits=threads)
