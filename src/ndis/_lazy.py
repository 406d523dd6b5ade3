"""A namespace's public names loaded on first use, each listed once, in the namespace's
`if TYPE_CHECKING:` block of imports.

Editors and type checkers read that block as ordinary imports and follow each name to the file that
defines it; at run time the block is skipped, and `attach` reads the same statements from the source
(without executing them) to build the module's `__getattr__` (PEP 562), `__dir__` and `__all__`, so
that importing the namespace imports nothing until a name is used.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pathlib
from collections.abc import Callable, Iterable
from typing import Any


def _listed(package: str, init_file: str) -> dict[str, tuple[str, str]]:
    """{public name: (absolute module, attribute)}, from the TYPE_CHECKING block of `init_file`."""
    tree = ast.parse(pathlib.Path(init_file).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    return {alias.asname or alias.name: (importlib.util.resolve_name("." * node.level + (node.module or ""), package),
                                         alias.name)
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}


def attach(package: str, init_file: str, submodules: Iterable[str] = ()) -> tuple[
        Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """(`__getattr__`, `__dir__`, `__all__`) for the package `package` whose `__init__.py` is `init_file`:
    the names of its TYPE_CHECKING block and the `submodules`, each imported on first use and then kept
    in the package's namespace."""
    names, submodules = _listed(package, init_file), tuple(submodules)
    public = sorted({*names, *submodules})

    def __getattr__(name: str) -> Any:
        if name in names:
            module, attribute = names[name]
            value = getattr(importlib.import_module(module), attribute)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(public))

    return __getattr__, __dir__, public
