"""Which code computed a stored value: the package version plus a hash of the source that value depends on.

A stored derived value (see analysis.stored) is kept under its name and this fingerprint, so a value made
by other code is absent and recomputed, while every value whose code did not change is read back.

What is followed, from the derived function (and its codec's types), transitively within the package:
- a function: its source text; the names its code uses (co_names of it and its nested code) resolved in
  its module's globals, in a package module it names (`mod.f`), and as attributes of the owning Analysis
  class (`self.ops`, `a.nesting`: the derived values and methods it reads, with their own dependencies);
  its defaults and closure cells; the names in its annotations.
- a class: its base classes, its methods, properties and class attributes, its dataclass fields.
- a function wrapped by functools (`@lru_cache`, `@cache`): the function it wraps.
- a module-level value (a rule table, a threshold, a regex): a canonical text of it, and the functions and
  classes inside it.
Code outside the package (numpy, the standard library) counts by its name only: the package version covers
a release. The Analysis classes themselves are followed by name (only the attributes a function reads), or
every stored value would depend on every other; a function reads them only if it is one of their methods
or may be handed one (an annotation names an Analysis class, or a parameter has none). Names are matched
by spelling, so an unrelated change may recompute a value (safe). Not seen: another library's code (a new
numpy), and code reached only through an object whose class no followed code names. Fingerprints are
computed once per process (code does not change under a running program); forget() starts over, for tests.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import linecache
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, get_args, get_origin

import numpy as np

from .lazy import bind_all

PACKAGE = __name__.split(".")[0]
_IDENT = re.compile(r"[A-Za-z_]\w*")
_DEPTH = 8  # nested data deeper than this counts by its type
_MEMO: dict[Any, str] = {}
_FILES_NAME_THE_CODE = True  # False once forget() said the running code may differ from the files
_PIECES: dict[Any, _Piece] = {}
# Not code: what Python writes on a class, and msgspec's cache of a type it has decoded or encoded (set on first use)
_SKIP = {
    "__dict__",
    "__weakref__",
    "__doc__",
    "__module__",
    "__qualname__",
    "__firstlineno__",
    "__static_attributes__",
    "__msgspec_cache__",
}


def fingerprint(key: Any, roots: Iterable[Any], owner: type) -> str:
    """16 hex digits naming the package version and the code reachable from roots, memoized under key."""
    found = _MEMO.get(key)
    if found is None:
        bind_all()  # the code is read with every name its modules import on first use in place (lazy.py)
        digest = hashlib.sha256(version().encode())
        for part in sorted(_Walk(owner).run(roots)):
            digest.update(part.encode(errors="surrogatepass") + b"\0")
        found = _MEMO[key] = digest.hexdigest()[:16]
    return found


def forget() -> None:
    """Compute every fingerprint again (as a new process would): for tests that change code."""
    global _FILES_NAME_THE_CODE  # noqa: PLW0603 - one flag for the process, as _MEMO is one memo
    _MEMO.clear()
    _PIECES.clear()
    _FILES_NAME_THE_CODE = False
    linecache.clearcache()


def files_name_the_code() -> bool:
    """May a fingerprint found under the stamp of the source files (code_stamp.py) be trusted? Not once forget()
    was called: tests change code under a running program, which no file shows."""
    return _FILES_NAME_THE_CODE


@functools.cache
def version() -> str:
    from importlib import metadata  # here: 20 ms that a re-open which finds its fingerprints never spends

    try:
        return metadata.version("tracetui")
    except metadata.PackageNotFoundError:
        return "unknown"


def _ours(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def _names(code: types.CodeType) -> set[str]:
    """The global and attribute names a code object and the code nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _source(fn: types.FunctionType) -> str:
    """The lines of fn's definition (decorators included), read as the module's file is now."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:  # no source shipped: the compiled code
        return _compiled(code)
    return "".join(lines[code.co_firstlineno - 1 : _last_line(code)])


def _compiled(code: types.CodeType) -> str:
    """The bytecode, names and constants of code and the code nested in it (the same in every process)."""
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            consts.append(_compiled(const))
        elif isinstance(const, frozenset):
            consts.append(repr(sorted(const, key=repr)))
        else:
            consts.append(repr(const))
    return f"{code.co_code.hex()} {code.co_names} {code.co_varnames} [{', '.join(consts)}]"


def _last_line(code: types.CodeType) -> int:
    ends = [end for _, end, _, _ in code.co_positions() if end] if hasattr(code, "co_positions") else []
    ends += [line for _, _, line in code.co_lines() if line]
    ends += [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max(ends, default=code.co_firstlineno)


def _cell(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # not yet assigned
        return None


def _is_code(value: Any) -> bool:
    """Something to follow rather than describe: a function, class, property, method or derived attribute, or a
    function wrapped by functools (lru_cache, cache: followed to the function it wraps)."""
    kinds = (types.FunctionType, type, property, staticmethod, classmethod, types.MethodType)
    return isinstance(value, kinds) or _is_derived(value) or _wrapped(value) is not None


def _wrapped(value: Any) -> types.FunctionType | None:
    """The function a functools wrapper (an lru_cache) holds; None for anything else. Described by its type, as
    another library's object, such a function was no code: roofline/peaks.py's cached table(), and the GPU table
    it reads, were in no fingerprint."""
    if isinstance(value, (types.FunctionType, type)):
        return None
    inner = getattr(value, "__wrapped__", None)
    return inner if isinstance(inner, types.FunctionType) else None


def _is_derived(value: Any) -> bool:
    return hasattr(value, "fn") and hasattr(value, "codec") and not isinstance(value, type)


@dataclass(frozen=True)
class _Piece:
    """What one function, class or derived attribute contributes, whoever owns it (kept per process)."""

    parts: tuple[str, ...]
    refs: tuple[Any, ...]  # the code it leads to
    names: frozenset[str] = frozenset()  # what it may read on an Analysis (self.ops, a.nesting)
    hints: frozenset[str] | None = frozenset()  # its class and the names in its annotations; None: some unannotated


def _piece(obj: Any) -> _Piece:
    found = _PIECES.get(obj)
    if found is None:
        found = _PIECES[obj] = _Describe().piece(obj)
    return found


class _Walk:
    """The code reachable from some roots, each piece (a function, a class, a module value) as a text."""

    def __init__(self, owner: type) -> None:
        self.owner = owner
        self.opaque = {c for c in owner.__mro__ if _ours(c)}
        self.opaque_names = {c.__name__ for c in self.opaque}
        self.seen: set[int] = set()
        self.todo: list[Any] = []
        self.parts: list[str] = []

    def run(self, roots: Iterable[Any]) -> list[str]:
        self.todo.extend(roots)
        while self.todo:
            obj = self.todo.pop()
            if id(obj) not in self.seen:
                self.seen.add(id(obj))
                self._visit(obj)
        return self.parts

    def _visit(self, obj: Any) -> None:
        if isinstance(obj, property):
            self.todo.extend(f for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        elif isinstance(obj, (staticmethod, classmethod, types.MethodType)):
            self.todo.append(obj.__func__)
        elif (inner := _wrapped(obj)) is not None:
            self.todo.append(inner)
        elif isinstance(obj, types.FunctionType):
            if _ours(obj) and not obj.__code__.co_filename.startswith(
                "<"
            ):  # not what dataclass wrote: its fields count
                self._take(_piece(obj))
        elif isinstance(obj, type):
            if _ours(obj) and obj not in self.opaque:
                self._take(_piece(obj))
        elif _is_derived(obj):
            self._take(_piece(obj))
        elif get_origin(obj) is not None:
            self.todo.extend(get_args(obj))

    def _take(self, piece: _Piece) -> None:
        self.parts.extend(piece.parts)
        self.todo.extend(piece.refs)
        if piece.hints is None or piece.hints & self.opaque_names:
            for name in sorted(piece.names):
                self._attribute(name)

    def _attribute(self, name: str) -> None:
        """A name read on the owning Analysis (self.ops): the derived value, method or class value it is."""
        for cls in self.owner.__mro__:
            if name in vars(cls):
                value = vars(cls)[name]
                if _is_code(value):
                    self.todo.append(value)
                elif _ours(cls):
                    describe = _Describe()
                    self.parts.append(f"{_qualname(cls)}.{name} = {describe.data(value)}")
                    self.todo.extend(describe.refs)
                return


class _Describe:
    """The text of one function, class or derived attribute, and the code it leads to."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.refs: list[Any] = []

    def piece(self, obj: Any) -> _Piece:
        if isinstance(obj, type):
            self._class(obj)
            return _Piece(tuple(self.parts), tuple(self.refs))
        if _is_derived(obj):  # its function, and its codec (the types it decodes to)
            self.parts.append(f"codec of {_qualname(obj.fn)}: {self.data(obj.codec)}")
            return _Piece(tuple(self.parts), (*self.refs, obj.fn))
        names = self._function(obj)
        return _Piece(tuple(self.parts), tuple(self.refs), frozenset(names), _hints(obj))

    def _function(self, fn: types.FunctionType) -> set[str]:
        self.parts.append(f"{_qualname(fn)}\n{_source(fn)}")
        names = _names(fn.__code__)
        spaces = [fn.__globals__] + [
            vars(m) for n in names if isinstance(m := fn.__globals__.get(n), types.ModuleType) and _ours(m)
        ]
        for space in spaces:
            for name in sorted(names & space.keys()):
                self._global(f"{space.get('__name__')}:{name}", space[name])
        extras = [_cell(c) for c in fn.__closure__ or ()]
        extras += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
        self.parts.append(f"{_qualname(fn)} defaults: {self.data(extras)}")
        for note in (a for a in fn.__annotations__.values() if isinstance(a, str)):
            found = (fn.__globals__.get(n) for n in _IDENT.findall(note))
            self.refs.extend(v for v in found if isinstance(v, type))
        return names

    def _global(self, where: str, value: Any) -> None:
        if isinstance(value, types.ModuleType):
            return  # a package module's names are resolved where it is used (see _function)
        if _is_code(value):
            self.refs.append(value)
        else:
            self.parts.append(f"{where} = {self.data(value)}")

    def _class(self, cls: type) -> None:
        self.refs.extend(b for b in cls.__bases__ if _ours(b))
        body = []
        for name, value in sorted(vars(cls).items()):
            if _is_code(value):
                self.refs.append(value)
            elif name not in _SKIP:
                body.append(f"{name}={self.data(value)}")
        self.parts.append(f"class {_qualname(cls)}: " + "; ".join(body))

    def data(self, value: Any, depth: int = 0) -> str:
        """A canonical text of a value (another library's objects by their type); the code inside it is followed."""
        if depth > _DEPTH:
            return type(value).__qualname__
        if isinstance(value, enum.Enum):
            self.refs.append(type(value))
            return f"{_qualname(type(value))}.{value.name}"
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return repr(value)
        if isinstance(value, re.Pattern):
            return f"re({value.pattern!r}, {value.flags})"
        if _is_code(value):
            self.refs.append(value)
            return _qualname(getattr(value, "fn", value))
        if get_origin(value) is not None:
            self.refs.extend(get_args(value))
            return repr(value)
        return self._container(value, depth)

    def _container(self, value: Any, depth: int) -> str:
        if isinstance(value, (list, tuple)):
            return f"{type(value).__name__}[" + ", ".join(self.data(v, depth + 1) for v in value) + "]"
        if isinstance(value, (set, frozenset)):
            return "{" + ", ".join(sorted(self.data(v, depth + 1) for v in value)) + "}"
        if isinstance(value, dict):
            items = (f"{self.data(k, depth + 1)}: {self.data(v, depth + 1)}" for k, v in value.items())
            return "{" + ", ".join(sorted(items)) + "}"
        if isinstance(value, np.ndarray):
            return f"array({value.dtype}, {value.shape}, {hashlib.sha256(value.tobytes()).hexdigest()})"
        if isinstance(value, dataclasses.Field):
            parts = (value.name, str(value.type), value.default, value.default_factory)
            return f"field{self.data(parts, depth + 1)}"
        if _ours(type(value)):
            self.refs.append(type(value))
            fields = dataclasses.fields(value) if dataclasses.is_dataclass(value) else ()
            state = {f.name: getattr(value, f.name) for f in fields} or getattr(value, "__dict__", {})
            return f"{_qualname(type(value))}({self.data(state, depth + 1)})"
        if isinstance(value, (np.dtype, np.generic)):
            return repr(value)
        return type(value).__qualname__  # another library's object: by its type (its repr may hold state)


def _hints(fn: types.FunctionType) -> frozenset[str] | None:
    """The class fn is a method of and the names in its annotations; None when a parameter has no annotation
    (it may be handed an Analysis)."""
    params = list(inspect.signature(fn).parameters)
    owner = fn.__qualname__.rpartition(".")[0].rpartition(".")[2]
    if params and params[0] in ("self", "cls") and owner:
        params = params[1:]
    notes = fn.__annotations__
    if any(p not in notes for p in params):
        return None
    return frozenset({owner} | {n for a in notes.values() for n in _IDENT.findall(str(a))})
