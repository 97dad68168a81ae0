"""The timeline's ranks of a job (r, R, o) and the keys it offers: rank keys with several ranks, the launch links
where there are links (else what says why not)."""

from __future__ import annotations

from functools import cached_property

from ..model.analysis import Analysis
from .timeline_draw import LaneState


class GoesToRanks(LaneState):
    """Rank keys, and which keys apply to this trace."""

    @cached_property
    def ranks(self) -> list[int]:
        """The ranks of the trace (asked by check_action on every refresh of the keys: once, not per lane each time)."""
        return sorted({t.rank for t in self.analysis.trace.tracks})

    @cached_property
    def _has_device(self) -> bool:
        return any(t.is_gpu for t in self.analysis.trace.tracks)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("rank", "only_rank"):
            return len(self.ranks) > 1
        if action in ("flow", "no_flow"):  # ] and [ offered where there are links, else they say why not
            return (self.no_links() is None) == (action == "flow")
        return True

    def no_links(self) -> str | None:
        """Why ] and [ have nothing to follow in this trace, or None when they have (or may have: still linking)."""
        a = self.analysis
        if not self._has_device:
            return "it has no device records"
        if a.ready(Analysis.links) and not (a.links.launcher >= 0).any():
            return "its device records have no launch correlations"
        return None

    def action_no_flow(self) -> None:
        self.notify(f"no launch or kernel links in this trace: {self.no_links()}", timeout=3)

    def current_rank(self) -> int:
        """The rank of the selection, else of the first lane in view."""
        tracks = self.analysis.trace.tracks
        if self.selected >= 0:
            return tracks[int(self.analysis.trace.x.track[self.selected])].rank
        if self.focus_rank is not None:
            return self.focus_rank
        first = next((line for line in self.lines[self.scroll_offset.y :] if line.kind == "row"), None)
        return tracks[first.track].rank if first is not None else self.ranks[0]

    def action_rank(self, step: int) -> None:
        ranks = self.ranks
        self.go_to_rank(ranks[(ranks.index(self.current_rank()) + step) % len(ranks)])

    def go_to_rank(self, rank: int) -> None:
        """Scroll the rank's first lane to the top (opened, if only another rank was shown) and select nothing."""
        tracks = self.analysis.trace.tracks
        if any(tracks[t].rank == rank for t in self.collapsed):
            self.collapsed = frozenset(t for t in self.collapsed if tracks[t].rank != rank)
            self._relayout()
        first = next(
            (k for k, line in enumerate(self.lines) if line.kind == "row" and tracks[line.track].rank == rank), 0
        )
        self.selected, self.focus_rank = -1, rank
        self.scroll_to(y=max(first - 1, 0), animate=False)
        self.post_message(self.SelectionChanged(-1))
        self.notify(f"rank {rank}", timeout=1.5)
        self._changed()

    def action_only_rank(self) -> None:
        """Collapse every rank's lanes but this one's to one row each (again: open them all)."""
        rank, tracks = self.current_rank(), self.analysis.trace.tracks
        others = frozenset(t.id for t in tracks if t.rank != rank and t.id in self.lanes.depths)
        self.collapsed = frozenset() if self.collapsed == others else others
        self._relayout()
        self.go_to_rank(rank)
