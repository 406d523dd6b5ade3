"""Test-session guard and shared fixtures.

The guard: the repository's folders theory/, mechanisms/, auditor/, experiments/ and core/ are
importable only as `ndis.*`.

`python -m pytest` puts the repository root on sys.path, where those folders would also import as
top-level packages and hide a wrong import name (as `import_module("experiments.x")` once did).
A finder at the front of sys.meta_path refuses those top-level names for the whole session.
"""

import importlib.abc
import os
import pathlib
import sys

import pytest

pytest_plugins = ("pytester",)  # tests/testing runs pytest sessions of the ndis plugin in-process

_OURS = frozenset({"core", "theory", "mechanisms", "auditor", "experiments"})


class _OnlyThroughNdis(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in _OURS:
            raise ImportError(f"{fullname!r} must be imported as 'ndis.{fullname}'")
        return None


sys.meta_path.insert(0, _OnlyThroughNdis())


@pytest.fixture
def cancer_csv() -> pathlib.Path:
    """The county cancer CSV named by $NDIS_CANCER_PATH; the test is skipped, saying how to provide it,
    when it is not set (the table is not shipped with the project)."""
    from ndis.experiments import datasets

    path = datasets.cancer_path()
    if path is None:
        pytest.skip(datasets.CANCER_MISSING)
    if not path.is_file():
        pytest.fail(f"{datasets.CANCER_VARIABLE}={os.environ[datasets.CANCER_VARIABLE]} is not a file")
    return path
