"""Every class of the viewer that has key bindings, and their ids (the keymap may remap only these).

The app passes its own class, so this module does not import tui.app on the app's path.
"""

from __future__ import annotations

from typing import Any


def bound_classes(app: type) -> list[Any]:
    """Every class with key bindings: the app (its class is passed in), its screens and the widgets of every view."""
    from ..screens.compare import CompareScreen
    from ..screens.details_overlay import DetailsOverlay
    from ..screens.help import HelpScreen
    from ..screens.main import MainScreen
    from ..screens.watch import WatchScreen
    from ..widgets import (
        code_view,
        critical_view,
        details,
        icicle,
        kernels_view,
        lazy_table,
        ops_view,
        roofline_view,
        rows_view,
        timeline,
        tree_view,
    )

    classes: list[Any] = [app, MainScreen, CompareScreen, HelpScreen, WatchScreen, DetailsOverlay]
    classes += [timeline.Timeline, tree_view.CallTreeView]
    classes += [rows_view.RowsView, ops_view.OpsView, kernels_view.KernelsView, code_view.CodeView]
    classes += [code_view.FramesTable, icicle.IcicleView, lazy_table.LazyTable, details.DetailsPanel]
    classes += [roofline_view.RooflineView, critical_view.CriticalPathTable]
    return classes + _snapshot_classes()


def _snapshot_classes() -> list[Any]:
    """The snapshot viewer's screen and widgets (tracetui open SNAPSHOT)."""
    from ..screens.snapshot import SnapshotScreen
    from ..widgets.snapshot_frames import FrameTable
    from ..widgets.snapshot_segments import SnapshotSegments
    from ..widgets.snapshot_timeline import SnapshotTimeline

    return [SnapshotScreen, SnapshotTimeline, SnapshotSegments, FrameTable]


def known_ids(app: type) -> set[str]:
    """Every binding id of the app's widgets and screens (the keymap may name only these)."""
    from textual.binding import Binding

    return {b.id for c in bound_classes(app) for b in c.BINDINGS if isinstance(b, Binding) and b.id}
