"""Errors of `tracetui profile` that the CLI prints as one line (exit 2), or with the user's traceback."""

from __future__ import annotations


class ProfileError(Exception):
    """A capture that cannot run as asked: missing torch, no CUDA, a bad option or path."""


class UserCodeError(Exception):
    """The user's own code raised (at import or in a step): exit 2, with the traceback of their frames only."""

    def __init__(self, headline: str, details: str = "") -> None:
        super().__init__(headline)
        self.headline, self.details = headline, details

    def report(self) -> str:
        """What the CLI prints: the headline, then the user's frames."""
        return f"tracetui: error in your code: {self.headline}" + (f"\n{self.details.rstrip()}" if self.details else "")
