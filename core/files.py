"""Result files written whole or not at all, and output folders used by one run at a time.

`write_atomic` writes a temporary file in the target's folder and renames it over the target
(`os.replace`, atomic on POSIX within one file system): a reader sees the old file or the new one,
never a truncated one, and a failed write (disk full, file-size limit) leaves no file behind.
`OutputFolder` is the folder of one command-line run: created when missing, locked
(`fcntl.flock` on its `.lock` file) so that a second run into it fails at once instead of mixing
its files with the first one's, and, when the run fails, removed if this run created it, else
given a `failed.txt` saying why. The `.lock` file is removed when the run releases the folder: it is
unlinked while still locked, so a run that opened it just before holds a lock on a file that is no longer
the folder's; after locking, every run checks that the file it locked is still the one at `.lock` (same
device and inode) and otherwise opens the new one and tries again. `OutputFolder.write` replaces a set
of files together: all are
written to temporary files first, then renamed with SIGINT and SIGTERM held back, so that Ctrl-C
leaves either all the old files or all the new ones.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import IO, Literal, TypeVar

#: A file path as the functions here take it.
StrPath = str | os.PathLike[str]
Path = TypeVar("Path", bound=StrPath)

#: The file a failed run leaves in a folder it did not create.
FAILED = "failed.txt"
#: The lock file of an output folder.
LOCK = ".lock"


def _temporary(path: pathlib.Path, data: bytes | str) -> pathlib.Path:
    """`data` written and flushed to a new temporary file beside `path`; removed again on any failure."""
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(name, 0o644)  # mkstemp makes it private; a result file is meant to be read
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return pathlib.Path(name)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM delivered only after the block (in the main thread of a POSIX process)."""
    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_files(files: Mapping[Path, bytes | str], folder: StrPath | None = None) -> list[pathlib.Path]:
    """Write {path: text or bytes} all or none: each to a temporary file beside its target, then every
    temporary renamed over its target with SIGINT / SIGTERM held back. Relative paths are taken in
    `folder` when given. On any failure (or Ctrl-C before the renames) the temporaries are removed
    and no target is touched. Returns the paths written."""
    targets = {pathlib.Path(folder or ".") / path: data for path, data in files.items()}
    staged = []
    try:
        for path, data in targets.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            staged.append((_temporary(path, data), path))
        with _signals_held():
            for temporary, path in staged:
                os.replace(temporary, path)
            staged = []
    finally:
        for temporary, _ in staged:
            with contextlib.suppress(OSError):
                temporary.unlink()
    return list(targets)


def write_atomic(path: StrPath, data: bytes | str) -> pathlib.Path:
    """Write one file whole or not at all (`write_files`)."""
    return write_files({path: data})[0]


class FolderUnusable(OSError):
    """The output folder cannot be created or written (`reason`), or another run holds its lock (`in_use`)."""

    def __init__(self, path: StrPath, reason: str, in_use: bool = False) -> None:
        where = f"{str(path)!r} is in use" if in_use else f"cannot write to {str(path)!r}"
        super().__init__(f"{where}: {reason}")
        self.reason, self.in_use = reason, in_use


class OutputFolder:
    """The output folder of one run, as a context manager (see the module docstring).

    On entry the folder is created if missing and locked (which also checks it is writable);
    FolderUnusable says why it cannot be used. On exit with an exception, a folder this
    run created is removed (unless an interruption left a partial report in it); a folder that
    existed gets `failed.txt` with the error's message (not for an interruption). The lock is
    released on exit and its `.lock` file removed.
    """

    def __init__(self, path: StrPath) -> None:
        self.path = pathlib.Path(path)
        self.created: pathlib.Path | None = None  # the outermost folder this run created, if any
        self._lock: IO[str] | None = None

    def __enter__(self) -> OutputFolder:
        missing = [folder for folder in (self.path, *self.path.parents) if not folder.exists()]
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.created = missing[-1] if missing else None
            self._acquire()
        except OSError as error:
            self._release()
            self._remove_created()
            if isinstance(error, FolderUnusable):
                raise
            raise FolderUnusable(self.path, error.strerror or str(error)) from None
        return self

    def _acquire(self) -> None:
        """Open and lock `.lock`; again while the file locked is no longer the one at the path (another
        run removed it between our open and our lock, releasing the folder)."""
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            self._lock = open(self.path / LOCK, "a")
            return
        while True:
            self._lock = open(self.path / LOCK, "a")
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._release()
                raise FolderUnusable(self.path, f"another run holds its lock ({LOCK}); wait for it to finish "
                                                "or choose another output folder", in_use=True) from None
            if self._locks_the_path():
                return
            self._release()

    def _locks_the_path(self) -> bool:
        """Whether the open lock file is the file at `.lock` now (not one a releasing run removed)."""
        try:
            at_path = os.stat(self.path / LOCK)
        except FileNotFoundError:
            return False
        if self._lock is None:
            return False
        mine = os.fstat(self._lock.fileno())
        return (mine.st_dev, mine.st_ino) == (at_path.st_dev, at_path.st_ino)

    def _release(self, remove: bool = False) -> None:
        """Close the lock file, which releases the flock; with `remove`, first unlink `.lock` if it is still
        the file this run locked (a failed run may have removed the whole folder already)."""
        if self._lock is None:
            return
        if remove and self._locks_the_path():
            with contextlib.suppress(OSError):
                os.unlink(self.path / LOCK)
        self._lock.close()
        self._lock = None

    def _remove_created(self) -> None:
        if self.created is not None:
            shutil.rmtree(self.created, ignore_errors=True)

    def write(self, files: Mapping[Path, bytes | str], stale: tuple[str, ...] = ()) -> list[pathlib.Path]:
        """`write_files` of {name: data} in the folder; then the `stale` files of an earlier run
        (e.g. a partial report) are removed."""
        written = write_files(files, self.path)
        for name in (*stale, FAILED):
            with contextlib.suppress(FileNotFoundError):
                (self.path / name).unlink()
        return written

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> Literal[False]:
        try:
            if kind is not None:
                self._after_failure(kind, error)
        finally:
            self._release(remove=True)
        return False

    def _after_failure(self, kind: type[BaseException], error: BaseException | None) -> None:
        """A folder this run created goes, unless an interruption left a partial report in it; a folder
        that existed before keeps its files and gets `failed.txt` (not for an interruption)."""
        interrupted = issubclass(kind, KeyboardInterrupt)
        if self.created is not None:
            left = [p.name for p in self.path.iterdir() if p.name != LOCK] if self.path.exists() else []
            if not (interrupted and left):
                self._remove_created()
        elif not interrupted:
            message = error.args[0] if error is not None and error.args else type(error).__name__
            with contextlib.suppress(OSError):
                write_atomic(self.path / FAILED, f"the last run into this folder failed: {message}\n"
                                                 "Any other files here are from an earlier run.\n")
