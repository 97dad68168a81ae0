"""SQL over a trace: the tables, defined once with their columns and meanings (`schema.py`), and a DuckDB session
that registers each when a query first names it (`session.py`).

A locked session (the MCP server's, and `tracetui sql`'s unless --writable) only reads: no statement that
changes the tables, no file access, bounded memory, settings locked; a query has a time limit (see session.py).
"""

from ..model.errors import QueryError
from .schema import TABLES, schema_document, schema_text
from .session import Answer, Session, one_line, plain, timeout_setting

__all__ = [
    "TABLES",
    "Answer",
    "QueryError",
    "Session",
    "one_line",
    "plain",
    "schema_document",
    "schema_text",
    "timeout_setting",
]
