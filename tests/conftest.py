"""Test-session guard: the repository's folders theory/, mechanisms/, auditor/, experiments/ and
core/ are importable only as `ndis.*`.

`python -m pytest` puts the repository root on sys.path, where those folders would also import as
top-level packages and hide a wrong import name (as `import_module("experiments.x")` once did).
A finder at the front of sys.meta_path refuses those top-level names for the whole session.
"""

import importlib.abc
import sys

_OURS = frozenset({"core", "theory", "mechanisms", "auditor", "experiments"})


class _OnlyThroughNdis(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in _OURS:
            raise ImportError(f"{fullname!r} must be imported as 'ndis.{fullname}'")
        return None


sys.meta_path.insert(0, _OnlyThroughNdis())
