"""Screens of the tracetui app."""
