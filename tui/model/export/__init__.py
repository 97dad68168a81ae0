"""A trace written back as Chrome JSON with what tracetui found added, to share in Perfetto or chrome://tracing
with someone who does not use tracetui (HTA's generate_trace_with_counters, and more).

added.py makes the new events (each stream's launch-queue length and each device's copy bandwidth per direction
as counters, the critical path as a lane of its own); write.py copies every original event's bytes unchanged
and splices the new ones in before the events array closes.
"""

from __future__ import annotations

from .added import KINDS, LANE_CAT, Added, added_events
from .write import Exported, ExportError, check_target, export

__all__ = ["KINDS", "LANE_CAT", "Added", "ExportError", "Exported", "added_events", "check_target", "export"]
