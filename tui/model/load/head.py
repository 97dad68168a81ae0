"""A damaged head: what can be read of the top-level keys before the events, and what was lost.

When the JSON before "traceEvents" does not decode (a head cut or edited by hand: `{ {` where
`"deviceProperties": [` was), each known key is looked for by name and its value read on its own;
whatever is named but unreadable, or is plainly there without its key (GPU properties), is lost, and
the load report says so in one phrase.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import msgspec

from .schema import TopLevel

KEYS = tuple(f for f in TopLevel.__struct_fields__ if f != "traceEvents")
# Fields only a GPU's entry in deviceProperties holds: their presence without the key means it was cut off.
_DEVICE_FIELDS = re.compile(rb'"(?:computeMajor|totalGlobalMem|numSms|maxThreadsPerBlock)"\s*:')
_WHAT = {  # what losing a key costs the user, where it is more than the key's name
    "deviceProperties": "the GPU properties (deviceProperties: no GPU name, no roofline peaks)",
    "distributedInfo": "the rank (distributedInfo)",
    "baseTimeNanoseconds": "the base time (baseTimeNanoseconds: times stay relative)",
}


@dataclass
class Head:
    """What was read from a damaged head, and a phrase for each thing lost."""

    top: TopLevel = field(default_factory=TopLevel)
    kept: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)

    def phrase(self, damage: str = "the JSON before the events is damaged") -> str:
        """One phrase for the load report's warning."""
        kept = f"; kept {', '.join(self.kept)}" if self.kept else ""
        lost = ", ".join(self.lost) if self.lost else "whatever it held"
        return f"{damage}: lost {lost}{kept}"


def salvage_head(text: bytes) -> Head:
    """Read what can be read of the top-level keys in a head that does not decode as a whole."""
    found: dict[str, object] = {}
    named: list[str] = []
    where: dict[str, int] = {}
    decoder = json.JSONDecoder()
    body = text.decode("utf-8", "replace")
    for key in KEYS:
        m = re.search(rf'"{key}"\s*:\s*', body)
        if m is None:
            continue
        named.append(key)
        where[key] = m.start()
        try:
            value, _ = decoder.raw_decode(body, m.end())
            msgspec.convert({key: value}, TopLevel)
        except (ValueError, msgspec.ValidationError, RecursionError):
            continue
        found[key] = value
    head = Head(msgspec.convert(found, TopLevel), kept=sorted(found, key=where.__getitem__))
    head.lost = [_WHAT.get(k, k) for k in named if k not in found]
    if "deviceProperties" not in found and "deviceProperties" not in named and _DEVICE_FIELDS.search(text):
        head.lost.insert(0, _WHAT["deviceProperties"])
    return head
