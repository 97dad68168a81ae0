"""A command palette's provider from a list of commands: each screen or app says which, this says how they are
found (every one when the palette opens, fuzzy-matched as the user types)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.command import Hit, Hits, Provider


class ListedCommands(Provider):
    """A provider whose commands are (title, callback, help) triples from `_commands`."""

    def _commands(self) -> Iterable[tuple[str, Callable, str]]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for title, call, text in self._commands():
            yield Hit(1.0, title, call, help=text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, call, text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), call, help=text)
