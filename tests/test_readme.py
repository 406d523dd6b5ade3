"""Every Python block of the README runs as written (in a fresh namespace, from a scratch directory)."""

import pathlib
import re

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
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), {"__name__": "__readme__"})
