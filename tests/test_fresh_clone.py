"""A fresh clone works anywhere: no file of the repository names an absolute path of some machine,
and nothing reads data from beside the repository (optional data comes from environment variables)."""

import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: an absolute path into a user's or a machine's folders: work, home, root, Users, mnt or srv at the
#: file system's root, or a Windows drive letter
MACHINE_PATH = re.compile(r"(?<![\w.~-])(/(?:work|home|root|Users|mnt|srv)/\w|[A-Z]:\\\\?\w)")
#: reading from a folder beside the repository
BESIDE = re.compile(r"parents\[2\]|\.\./shared|ROOT\.parent\b")


def _tracked_text_files():
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in listed.splitlines():
        path = ROOT / name
        if path.is_file() and not path.is_symlink() and path.suffix not in {".png", ".csv", ".zip"}:
            yield path


def test_no_file_names_a_machines_absolute_path():
    found = [f"{path.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
             for path in _tracked_text_files()
             for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1) if MACHINE_PATH.search(line)]
    assert not found, "absolute paths of a machine:\n" + "\n".join(found)


def test_no_code_reads_from_beside_the_repository():
    found = [f"{path.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
             for path in _tracked_text_files() if path.suffix == ".py" and path.name != "test_fresh_clone.py"
             for i, line in enumerate(path.read_text().splitlines(), 1) if BESIDE.search(line)]
    assert not found, "reads beside the repository:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_are_for():
    root = "/"  # the examples are assembled here so that this file does not match its own pattern
    assert MACHINE_PATH.search(f'CANCER = "{root}work/shared/data/cancer_reg.csv"')
    assert MACHINE_PATH.search(f"see {root}home/alice/data.csv") and MACHINE_PATH.search("C:" + "\\Users\\me")
    assert not MACHINE_PATH.search("out/audit-als and docs/auditor/method.md and a/b 1/2 ~/x /tmp/x")
    assert BESIDE.search('pathlib.Path(__file__).resolve().parents[2] / "shared"')
