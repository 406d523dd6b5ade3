"""Every Python block of the README runs as written (in a fresh namespace, from a scratch directory); a
block that defines pytest tests is run by pytest, as a user would run it, with ndis's plugin and a fixed
session seed (--ndis-seed 0), and its tests must pass."""

import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
OPTIONAL = ("opendp", "diffprivlib", "pydp", "opacus")  # the libraries extra: blocks using one skip without it


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, tmp_path, monkeypatch, capsys):
    for library in re.findall(rf"^(?:import|from) ({'|'.join(OPTIONAL)})\b", BLOCKS[index], flags=re.M):
        pytest.importorskip(library)
    monkeypatch.chdir(tmp_path)
    tests = re.findall(r"^def (test_\w+)", BLOCKS[index], flags=re.M)
    if tests:
        (tmp_path / "test_readme_block.py").write_text(BLOCKS[index])
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--ndis-seed=0",
                               "test_readme_block.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and f"{len(tests)} passed" in done.stdout, done.stdout + done.stderr
        return
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), {"__name__": "__readme__"})
