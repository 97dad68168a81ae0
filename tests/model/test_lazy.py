"""Imports on first use (model/lazy.py): a name imports its own module when read, bind() puts every name in place,
and a Blob() decodes to its function's return type through them."""

from __future__ import annotations

import sys
import textwrap

import msgspec
import pytest

from tui.model import lazy
from tui.model.store import Blob

HOLDER = """
from __future__ import annotations

from typing import TYPE_CHECKING

from tui.model.lazy import imports_on_use

if TYPE_CHECKING:
    from .apples import Apple, count_apples
    from .pears import (
        Pear,
        count_pears as pears_counted,
    )

__getattr__ = imports_on_use(globals())


def apples(n: int) -> list[Apple]:
    return [Apple(k) for k in range(count_apples(n))]
"""


@pytest.fixture
def fruit(tmp_path, monkeypatch):
    """A package whose holder module names apples and pears only under TYPE_CHECKING."""
    package = tmp_path / "fruit"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "holder.py").write_text(HOLDER)
    for kind in ("apple", "pear"):
        (package / f"{kind}s.py").write_text(
            textwrap.dedent(f"""
            from dataclasses import dataclass

            @dataclass
            class {kind.title()}:
                size: int

            def count_{kind}s(n: int) -> int:
                return n
            """)
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [m for m in sys.modules if m == "fruit" or m.startswith("fruit.")]:
        del sys.modules[name]
    lazy._MODULES.pop("fruit.holder", None)


def test_a_name_imports_its_own_module_when_first_read(fruit):
    import fruit.holder as holder

    assert "fruit.apples" not in sys.modules and "fruit.pears" not in sys.modules
    from fruit.holder import Apple

    assert Apple.__module__ == "fruit.apples" and vars(holder)["Apple"] is Apple  # kept: later reads are plain
    assert "fruit.pears" not in sys.modules, "only the module of the name read"
    assert holder.pears_counted(3) == 3  # an `as` name, from a parenthesized import
    with pytest.raises(AttributeError, match="no attribute 'Plum'"):
        holder.Plum  # noqa: B018


def test_bind_puts_every_name_in_place_before_the_code_runs(fruit):
    import fruit.holder as holder

    with pytest.raises(NameError):  # a function's global reads do not go through the module's __getattr__
        holder.apples(2)
    lazy.bind("fruit.holder")
    assert holder.apples(2) == [holder.Apple(0), holder.Apple(1)]
    assert {"Apple", "count_apples", "Pear", "pears_counted"} <= set(vars(holder))


def test_a_blob_without_its_kind_decodes_to_what_its_function_returns(fruit):
    import fruit.holder as holder

    assert lazy.return_type(holder.apples) == list[holder.Apple]
    codec = Blob().keeping(holder.apples)
    kept: dict[str, bytes] = {}

    class Store:
        put_blob = kept.__setitem__
        get_blob = kept.get

    lazy.bind("fruit.holder")
    codec.save(Store, "apples", holder.apples(2))  # type: ignore[arg-type]
    assert codec.load(Store, "apples", 0) == [holder.Apple(0), holder.Apple(1)]  # type: ignore[arg-type]
    kept["apples"] = msgspec.msgpack.encode([{"size": "big"}])
    assert codec.load(Store, "apples", 0) is None, "not its type: recomputed, never trusted"  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="stored"):
        Blob().coders()
