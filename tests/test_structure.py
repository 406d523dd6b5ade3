"""The package's structure: one namespace, no import circles, the neighbour relations defined once,
and user modules named like our subpackages never shadow them."""

from __future__ import annotations

import ast
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"
#: the subpackages that keep a top-level folder of the repository, linked into src/ndis
LINKED = ("core", "theory", "mechanisms", "auditor", "experiments")
RELATION_NAMES = {"remove", "zero", "replace", "entry"}


def _modules() -> dict[str, pathlib.Path]:
    """Every module of the installed namespace, subpackages included: dotted name -> source file."""
    found = {}
    paths = [pathlib.Path(folder) / file for folder, _, files in os.walk(SOURCE / "ndis", followlinks=True)
             for file in files if file.endswith(".py")]
    for path in sorted(paths):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def test_every_top_level_folder_is_linked_into_the_namespace():
    for name in LINKED:
        link = SOURCE / "ndis" / name
        assert link.is_symlink() and link.resolve() == ROOT / name, f"src/ndis/{name} must link to {name}/"
    packages = {name for name, path in _modules().items() if path.stem == "__init__"}
    assert {"ndis.auditor.sampling", "ndis.auditor.scoring", "ndis.auditor.statistics",
            "ndis.auditor.reporting", "ndis.mechanisms.libraries"} <= packages


def _imports(name: str, path: pathlib.Path, modules: dict) -> set[str]:
    """The project modules `name` imports anywhere in its source (function-level imports included)."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
            targets |= submodules
            if len(submodules) < len(node.names):  # attributes of `base` itself
                targets.add(base)
    return {t for t in targets if t in modules and t != name}


def test_the_import_graph_has_no_cycle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert len(graph) > 40  # the walk saw the whole package


#: The layers, lowest first (`ndis._lazy`, standard library only, is below them all; the namespace's own
#: `__init__` lists every everyday name, so it sits on top). A module imports modules of its own layer
#: and of lower ones only, at import time or inside a function alike.
LAYERS = (("ndis._lazy",), ("ndis.core",), ("ndis.theory",), ("ndis.mechanisms",), ("ndis.auditor",),
          ("ndis.experiments", "ndis.testing", "ndis.cli", "ndis.plot_process", "ndis.__main__", "ndis"))


def _layer(module: str) -> int:
    """The index in `LAYERS` of the layer holding `module` (the longest matching prefix)."""
    found = [(len(prefix), index) for index, layer in enumerate(LAYERS) for prefix in layer
             if module == prefix or module.startswith(prefix + ".")]
    assert found, f"{module} is in no layer"
    return max(found)[1]


def test_the_layers_import_only_downwards():
    # core -> theory -> mechanisms -> auditor -> experiments, testing, the command line
    modules = _modules()
    upwards = sorted(f"{name} imports {target}" for name, path in modules.items()
                     for target in _imports(name, path, modules) if _layer(target) > _layer(name))
    assert not upwards, upwards
    assert {_layer(name) for name in modules} == set(range(len(LAYERS)))   # every layer holds modules


def test_no_module_imports_a_top_level_name_outside_the_namespace():
    ours = {"core", "theory", "mechanisms", "auditor", "experiments"}
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert not roots & ours, f"{name} imports {roots & ours} outside the ndis namespace"


def test_the_audit_and_theory_modules_import_no_heavy_library_at_import_time():
    """scipy.stats, scipy.optimize, scipy.integrate and scikit-learn take seconds to import: they are
    imported by the functions that use them, so an audit whose scorer, mechanism and outputs do not
    need them never pays for them."""
    code = ("import sys, ndis.auditor.api, ndis.theory.spectrum, ndis.mechanisms.registry; "
            "print(sorted(m for m in ('scipy.stats', 'scipy.optimize', 'scipy.integrate', 'sklearn', 'torch', "
            "'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_neighbour_relations_are_listed_in_one_place_only():
    listings = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                strings = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if len(strings & RELATION_NAMES) >= 2:
                    listings.append(f"{name}:{node.lineno}")
    assert listings and all(place.startswith("ndis.core.neighbors:") for place in listings), listings


USER_FILES = {
    "mechanisms.py": """
        import numpy as np

        def my_mech(data, rng):
            data = np.asarray(data, dtype=float)
            return data.mean(axis=0) + 0.05 * rng.standard_normal(data.shape[1])
    """,
    "theory.py": "raise ImportError('the user theory module must never be imported by ndis')\n",
    "auditor.py": "raise ImportError('the user auditor module must never be imported by ndis')\n",
    "experiments/__init__.py": "raise ImportError('the user experiments package must never be imported by ndis')\n",
    "audit_me.py": """
        import ndis
        from mechanisms import my_mech
        report = ndis.audit(my_mech, ndis.load_dataset("synthetic:n=50,d=2,seed=0"), neighbor="zero:0",
                            n_samples=4000, eps=[0.0, 0.5, 1.0], scorer="quadratic", seed=1)
        print("estimate", report.delta[0])
    """,
}


@pytest.fixture(scope="module")
def user_directory(tmp_path_factory):
    folder = tmp_path_factory.mktemp("user")
    for relative, text in USER_FILES.items():
        path = folder / relative
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return folder


def test_a_users_mechanisms_module_is_audited_from_the_command_line(user_directory):
    script = pathlib.Path(sys.executable).parent / "ndis"
    command = [str(script), "audit", "mechanisms:my_mech", "--data", "synthetic:n=50,d=2,seed=0",
               "--neighbor", "zero:0", "--samples", "4000", "--eps", "0:1:3", "--scorer", "quadratic", "--out", "out"]
    done = subprocess.run(command, cwd=user_directory, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads((user_directory / "out" / "report.json").read_text())
    assert report["mechanism"] == "my_mech" and len(report["delta"]) == 3


def test_a_users_modules_do_not_shadow_ndis_in_python(user_directory):
    done = subprocess.run([sys.executable, "audit_me.py"], cwd=user_directory, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("estimate ")
