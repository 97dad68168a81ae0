"""Notifications are plain text: they carry names from the trace (`moe_layer[E=16, ...]`), and Rich markup in
them ended the app with a MarkupError; control characters in them are shown as escapes (tui.text.sanitize). One
rule at the App, so no call site can forget it."""

from __future__ import annotations

from textual.notifications import SeverityLevel

from ..text.sanitize import visible, visible_lines


class PlainNotifications:
    """Mixed into each App (a widget's notify goes through its app's)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,  # noqa: ARG002 - accepted as Textual's signature has it; never markup here
    ) -> None:
        text, title = visible_lines(message), visible(title)
        super().notify(text, title=title, severity=severity, timeout=timeout, markup=False)  # type: ignore[misc]
