"""Imports a module makes when a name is first used: what a cached command never uses, it never imports.

Results names every analysis (the code of each value it holds, the type each stored value decodes to), yet a
cached `summary` reads two values back from the store and runs none of that code: importing it all was a third
of the command's time. Such a module writes its imports as ever, under `if TYPE_CHECKING:` (linters, type
checkers and the import contracts read them there, as the one list of what it imports), and ends with

    __getattr__ = imports_on_use(globals())

A name read from the module (`from .results import X`, a codec's type) imports its own module then, and only
it. A function's own global reads find the names only once they are in place, so such a module's code runs as
derived values (analysis.py: bind() before one is computed) and is fingerprinted (code_id.py) after bind_all():
what runs and what a fingerprint reads are the same as with plain imports.
"""

from __future__ import annotations

import ast
import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

_MODULES: dict[str, _OnUse] = {}  # every module whose imports wait for use, by name
_BOUND = threading.Event()  # set once every name of every such module is in place


class _OnUse:
    """One module's imports in waiting: read from its TYPE_CHECKING block on first use."""

    def __init__(self, space: dict[str, Any]) -> None:
        self.space = space
        self.homes: dict[str, tuple[str, str]] | None = None  # name -> (module, its name there)
        self.lock = threading.Lock()
        self.bound = False  # every name in place

    def __call__(self, name: str) -> Any:
        """The module's __getattr__: a name of its TYPE_CHECKING imports, imported and kept in its globals."""
        home = self._homes().get(name)
        if home is None:
            raise AttributeError(f"module {self.space['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0], self.space["__package__"]), home[1])
        self.space[name] = value  # later reads are plain global reads
        return value

    def bind(self) -> None:
        if not self.bound:
            for name in self._homes():
                if name not in self.space:
                    self(name)
            self.bound = True

    def _homes(self) -> dict[str, tuple[str, str]]:
        with self.lock:
            if self.homes is None:
                self.homes = _imports_under_type_checking(self.space["__file__"])
        return self.homes


def imports_on_use(space: dict[str, Any]) -> Callable[[str], Any]:
    """A module's __getattr__ that imports the names of its TYPE_CHECKING block when they are first read."""
    on_use = _MODULES[space["__name__"]] = _OnUse(space)
    _BOUND.clear()
    return on_use


def bind(module: str) -> None:
    """Every waiting name of one module in place (none for a module that imports as usual): before its code runs."""
    on_use = _MODULES.get(module)
    if on_use is not None:
        on_use.bind()


def bind_all() -> None:
    """Every waiting name of every module in place: before code is fingerprinted (code_id.py), which follows names
    from module to module."""
    if _BOUND.is_set():
        return
    for on_use in list(_MODULES.values()):
        on_use.bind()
    _BOUND.set()


def _imports_under_type_checking(path: str) -> dict[str, tuple[str, str]]:
    """name -> (module, name in it) of the `from ... import ...` statements in the file's top-level
    `if TYPE_CHECKING:` block (only that block is parsed: the whole file would cost a cached start 3 ms)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index("if TYPE_CHECKING:") + 1
    end = next((k for k in range(start, len(lines)) if lines[k] and not lines[k][0].isspace()), len(lines))
    homes = {}
    for node in ast.parse("\n".join(line[4:] for line in lines[start:end])).body:
        if not isinstance(node, ast.ImportFrom):
            raise TypeError(f"{path}, line {start + node.lineno}: only `from ... import ...` may wait for use")
        module = "." * node.level + (node.module or "")
        homes.update({alias.asname or alias.name: (module, alias.name) for alias in node.names})
    return homes


def return_type(function: Callable[..., Any]) -> Any:
    """What function's return annotation names, its names read through its module: one waiting to be imported is
    imported now (typing.get_type_hints would read the module's globals only, where it is not yet)."""
    note = function.__annotations__["return"]
    if not isinstance(note, str):
        return note
    return eval(note, function.__globals__, _Through(sys.modules[function.__module__]))  # noqa: S307 - our own source


class _Through(Mapping[str, Any]):
    """A module's names as its attributes: those its __getattr__ imports on use included."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def __getitem__(self, name: str) -> Any:
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise KeyError(name) from None  # a builtin (list, dict, int): eval looks there next

    def __iter__(self) -> Iterator[str]:
        return iter(vars(self.module))

    def __len__(self) -> int:
        return len(vars(self.module))
