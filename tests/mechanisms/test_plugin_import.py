"""`module.path:callable` plug-ins: imported as installed; only a module found nowhere else is looked
for in the working directory, appended to sys.path after everything installed."""

import json
import sys

import pytest

from ndis.mechanisms.registry import resolve


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh working directory, sys.path and the plug-in modules of these tests restored afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield tmp_path
    for name in ("ndis_plugin_here", "ndis_plugin_needs_missing"):
        sys.modules.pop(name, None)


def test_an_installed_module_does_not_put_the_working_directory_on_sys_path(workdir):
    # Before: the working directory was appended on every plug-in import, contrary to the docstring.
    (workdir / "json.py").write_text("def dumps(value):\n    return 'shadowed'\n")
    assert resolve("json:dumps") is json.dumps
    assert str(workdir) not in sys.path


def test_a_module_only_in_the_working_directory_is_found_after_everything_installed(workdir):
    (workdir / "ndis_plugin_here.py").write_text("def mechanism(data, n, rng):\n    return rng.normal(size=(n, 1))\n")
    assert resolve("ndis_plugin_here:mechanism").__module__ == "ndis_plugin_here"
    assert sys.path[-1] == str(workdir)


def test_a_plug_in_found_nowhere_or_missing_a_dependency_is_a_clear_error(workdir):
    with pytest.raises(ValueError, match="cannot import module 'ndis_plugin_absent' .*working directory"):
        resolve("ndis_plugin_absent:mechanism")
    assert str(workdir) not in sys.path  # nothing was found there: the path is left as it was
    (workdir / "ndis_plugin_needs_missing.py").write_text("import ndis_dependency_absent\n")
    with pytest.raises(ValueError, match="No module named 'ndis_dependency_absent'"):
        resolve("ndis_plugin_needs_missing:mechanism")
