"""The name search's regular expressions, matched in time linear in the name: no pattern can hang a search.

Python's `re` backtracks: `^(a+)+$` on a name of 30 a's and a b took over 60 s, holding the interpreter (the
viewer's screen froze with it). RE2 (google-re2) matches in linear time and refuses only what needs
backtracking (lookaround, backreferences), said in one line. The search is case-insensitive, anywhere in the
name, as it always was. Where google-re2 is not installed, Python's `re` is used as before.
"""

from __future__ import annotations

import re
from typing import Any, Protocol


class Matcher(Protocol):
    @property
    def pattern(self) -> Any: ...  # as written, for the key bar and the table's status

    def search(self, text: str) -> Any: ...


class BadPattern(ValueError):
    """A pattern that does not compile: the message says why, in one line."""


def compile_name_pattern(pattern: str) -> Matcher:
    """A case-insensitive matcher of names; BadPattern (one line) when the pattern cannot be one."""
    try:
        import re2
    except ImportError:  # (a declared dependency; an environment without it searches as before)
        return _python(pattern)
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # (RE2 would print each refused pattern on stderr)
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        _python(pattern)  # Python's own message where the pattern is no regular expression at all
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise BadPattern(
            f"{why} (the search matches in linear time, with RE2's syntax: no lookaround or backreferences)"
        ) from None


def _python(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise BadPattern(str(exc)) from None


class _Nothing:
    pattern = ""

    def search(self, text: str) -> None:
        return None


NOTHING: Matcher = _Nothing()  # the empty search: matches no name
