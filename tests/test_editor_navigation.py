"""Editors can follow our imports: in the editable install, jedi (the engine behind most editors'
go-to-definition) resolves the everyday names to the files that define them."""

import pathlib
import sys

import pytest

jedi = pytest.importorskip("jedi")

ROOT = pathlib.Path(__file__).resolve().parents[1]

CASES = [
    ("from ndis.theory import gaussian_delta\ngaussian_delta", "theory/gaussian.py", "def gaussian_delta"),
    ("from ndis.auditor.api import audit\naudit", "auditor/api.py", "def audit"),
    ("import ndis\nndis.audit", "auditor/api.py", "def audit"),
    ("import ndis\nndis.get_mechanism", "mechanisms/registry.py", "def get"),
    ("from ndis.auditor.statistics.bounds import detectable_floor\ndetectable_floor", "auditor/statistics/bounds.py",
     "def detectable_floor"),
    ("from ndis.testing import assert_dp\nassert_dp", "src/ndis/testing/assertions.py", "def assert_dp"),
    ("import ndis.testing\nndis.testing.PrivacyViolation", "src/ndis/testing/assertions.py", "class PrivacyViolation"),
    ("import ndis\nndis.load_dataset", "experiments/datasets.py", "def load"),
    ("import ndis\nndis.audit_one_run", "auditor/one_run/audit.py", "def audit_one_run"),
]


@pytest.mark.parametrize("source,relative,definition", CASES)
def test_go_to_definition_reaches_the_defining_file(source, relative, definition, tmp_path):
    environment = jedi.create_environment(sys.prefix, safe=False)  # the interpreter's own sys.path, as an editor sees it
    lines = source.splitlines()
    script = jedi.Script(source, path=tmp_path / "user_code.py", environment=environment)
    found = script.goto(len(lines), len(lines[-1]), follow_imports=True)
    assert found, f"jedi found no definition for {lines[-1]!r}"
    path = pathlib.Path(found[0].module_path).resolve()
    assert path == (ROOT / relative).resolve()
    assert path.read_text().splitlines()[found[0].line - 1].startswith(definition)


README = ROOT / "README.md"


def _readme_imports() -> list[tuple[str, str]]:
    """(module, name) of every `from ndis... import name` in the README's Python blocks."""
    import ast
    import re

    found = []
    for block in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ndis":
                found += [(node.module, alias.name) for alias in node.names]
    return found


def test_every_name_the_readme_imports_resolves_to_its_definition(tmp_path):
    environment = jedi.create_environment(sys.prefix, safe=False)
    imports = _readme_imports()
    assert len(imports) >= 8   # ndis.testing.assert_dp, taught in the prose, is in CASES above
    unresolved = []
    for module, name in imports:
        source = f"from {module} import {name}\n{name}"
        found = jedi.Script(source, path=tmp_path / "user_code.py", environment=environment).goto(
            2, len(name), follow_imports=True)
        if not found or found[0].module_path is None or found[0].type not in ("function", "class", "module", "statement",
                                                                               "instance"):
            unresolved.append(f"{module}.{name}")
    assert not unresolved, unresolved
