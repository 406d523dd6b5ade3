"""Result files written whole or not at all, and output folders one run at a time (core.files)."""

import os
import subprocess
import sys
import textwrap

import pytest

from ndis.core import files


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    # a file-size limit of 1 kB (RLIMIT_FSIZE, in a child process: Python ignores SIGXFSZ, so the write
    # fails with EFBIG) makes the 10 kB write fail; before core.files the target was left truncated
    target = tmp_path / "report.json"
    target.write_text("old contents\n")
    code = textwrap.dedent(f"""
        import resource, sys
        from ndis.core import files
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY))
        try:
            files.write_atomic({str(target)!r}, "x" * 10_000)
        except OSError as error:
            print(error.errno)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "27"  # EFBIG: File too large
    assert target.read_text() == "old contents\n" and sorted(os.listdir(tmp_path)) == ["report.json"]


def test_several_files_are_replaced_all_or_none(tmp_path):
    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "blocked").write_text("a file where a folder is needed")
    with pytest.raises(OSError):
        files.write_files({"a.txt": "new a", "blocked/b.txt": "new b"}, tmp_path)
    assert (tmp_path / "a.txt").read_text() == "old a"  # not replaced: another file of the set failed
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "blocked"]
    assert files.write_files({"a.txt": "new a", "c.bin": b"\x00\x01"}, tmp_path) == [tmp_path / "a.txt",
                                                                                   tmp_path / "c.bin"]
    assert (tmp_path / "a.txt").read_text() == "new a" and (tmp_path / "c.bin").read_bytes() == b"\x00\x01"


def test_an_output_folder_serves_one_run_at_a_time(tmp_path):
    with files.OutputFolder(tmp_path / "out") as first:
        with pytest.raises(files.FolderUnusable, match="is in use: another run holds its lock") as refused:
            files.OutputFolder(tmp_path / "out").__enter__()
        assert refused.value.in_use
        first.write({"report.json": "{}"})
    with files.OutputFolder(tmp_path / "out") as again:  # released on exit
        assert (again.path / "report.json").read_text() == "{}"


def test_a_released_folder_keeps_no_lock_file_and_a_run_that_opened_the_old_one_locks_again(tmp_path, monkeypatch):
    out = tmp_path / "out"
    with files.OutputFolder(out) as first:
        assert (out / files.LOCK).exists()
        first.write({"report.json": "{}"})
    assert os.listdir(out) == ["report.json"]                  # no .lock left behind
    # the race of removing it: a second run opens .lock, then the first releases the folder (unlinking the
    # file) before the second locks it. The second must not hold a lock on the unlinked file, or a third
    # run, creating a new .lock, would run beside it
    first = files.OutputFolder(out).__enter__()

    def open_then_first_releases(path, mode):
        handle = open(path, mode)
        if first._lock is not None:
            first.__exit__(None, None, None)
        return handle

    monkeypatch.setattr(files, "open", open_then_first_releases, raising=False)
    second = files.OutputFolder(out).__enter__()
    monkeypatch.undo()
    with pytest.raises(files.FolderUnusable, match="is in use"):
        files.OutputFolder(out).__enter__()
    second.__exit__(None, None, None)
    assert os.listdir(out) == ["report.json"]


def test_a_failed_run_removes_the_folder_it_created_and_marks_one_it_did_not(tmp_path):
    with pytest.raises(ValueError):
        with files.OutputFolder(tmp_path / "new" / "out"):
            raise ValueError("the mechanism's name is unknown")
    assert not (tmp_path / "new").exists()  # every folder this run created is gone
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "report.json").write_text("an earlier run's report")
    with pytest.raises(ValueError):
        with files.OutputFolder(existing):
            raise ValueError("the mechanism's name is unknown")
    assert (existing / "report.json").read_text() == "an earlier run's report"
    assert "failed: the mechanism's name is unknown" in (existing / files.FAILED).read_text()
    with files.OutputFolder(existing) as out:  # a successful write removes the stale failure note
        out.write({"report.json": "new"})
    assert sorted(os.listdir(existing)) == ["report.json"]


def test_an_interruption_keeps_a_partial_report_and_nothing_else(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with files.OutputFolder(tmp_path / "kept") as out:
            out.write({"partial.json": "{}"})
            raise KeyboardInterrupt
    assert (tmp_path / "kept" / "partial.json").exists()
    with pytest.raises(KeyboardInterrupt):
        with files.OutputFolder(tmp_path / "empty"):
            raise KeyboardInterrupt
    assert not (tmp_path / "empty").exists()  # nothing was written: no folder left behind


def test_an_unwritable_folder_says_why(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(files.FolderUnusable, match="cannot write to .*file/sub"):
        files.OutputFolder(tmp_path / "file" / "sub").__enter__()
