"""SQL over a trace: the tables, defined once with their columns and meanings (`schema.py`), and a DuckDB session
that registers each when a query first names it (`session.py`).

A locked session (the MCP server's) runs with DuckDB's external access off and its settings locked: a query
reads and writes no file, and cannot turn that back on.
"""

from ..model.errors import QueryError
from .schema import TABLES, schema_document, schema_text
from .session import Answer, Session, one_line, plain

__all__ = ["TABLES", "Answer", "QueryError", "Session", "one_line", "plain", "schema_document", "schema_text"]
