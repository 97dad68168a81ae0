"""Textual widgets of the tracetui app."""
