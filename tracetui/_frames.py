"""Any table of the API as a pandas DataFrame or an Arrow table, when pandas or pyarrow is installed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas
    import pyarrow

ROWS_FIRST = ("rows", "devices", "findings", "ranks", "path")  # the table of a document, when it has one of these


def table_rows(table: Any, key: str | None = None) -> list[dict]:
    """The rows of a table: a list of row dicts as it is, or a document's rows (its "rows", "devices", ... list;
    key names another, such as "kernels" of a diff)."""
    if isinstance(table, list):
        return table
    if not isinstance(table, dict):
        raise TypeError(f"expected a document (dict) or a list of rows, got {type(table).__name__}")
    if key is not None:
        if not isinstance(table.get(key), list):
            raise KeyError(f"no table {key!r} here; its tables: {', '.join(_lists(table)) or 'none'}")
        return table[key]
    for name in ROWS_FIRST:
        if isinstance(table.get(name), list):
            return table[name]
    found = _lists(table)
    if len(found) == 1:
        return table[found[0]]
    raise KeyError(f"which table? pass key= one of {', '.join(found)}" if found else "this document holds no table")


def _lists(doc: dict) -> list[str]:
    return [k for k, v in doc.items() if isinstance(v, list) and all(isinstance(r, dict) for r in v)]


def to_pandas(table: Any, key: str | None = None) -> pandas.DataFrame:
    """A table as a pandas DataFrame: t.ops(), t.kernels(), t.events(), t.steps(), t.sql(...), a diff with key=."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas needs pandas: pip install pandas") from None
    return pd.DataFrame.from_records(table_rows(table, key))


def to_arrow(table: Any, key: str | None = None) -> pyarrow.Table:
    """A table as a pyarrow Table (the same tables as to_pandas)."""
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("to_arrow needs pyarrow: pip install pyarrow") from None
    return pa.Table.from_pylist(table_rows(table, key))
