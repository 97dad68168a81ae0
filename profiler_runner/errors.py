"""Errors of `tracetui profile` that the CLI prints as one line (exit 2)."""


class ProfileError(Exception):
    """A capture that cannot run as asked: missing torch, no CUDA, a bad option or path."""
