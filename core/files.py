"""Result files written atomically: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import pathlib
import tempfile


def write_atomic(path, content: str | bytes) -> pathlib.Path:
    """Write `content` (text as UTF-8, or bytes) to a temporary file beside `path`, then rename it over
    `path` (os.replace, atomic on POSIX and Windows); the folder is created if needed."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)   # mkstemp makes it private; a report is meant to be read
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return path
