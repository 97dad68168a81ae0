"""The templates of the slow-copies explain rule's notes (explain/copies.py)."""

from __future__ import annotations

COPY_TEMPLATES = {
    "slow-copies": "The {count:,} {kind} copies move {bytes:size} at {gbps:.2f}, {time:long} in all ({share:.1%} of "
    "the window): {link_pct:.0%} of the host link, {link} at {link_gbps:.0f} each way ({link_source}); large pinned "
    "copies run near that rate.",
    "slow-copies-tiny": "Most of that time goes to tiny copies ({small:,} under 64 KiB, {small_share} of the time; "
    "{median_bytes:,} bytes median): each copy pays a fixed cost of a few microseconds whatever its size. Batch "
    "them into one copy (torch.cat or a preallocated buffer first), or keep the data on the device.",
    "slow-copies-pageable": "{pageable:,} of them, {pageable_share} of the time, are to or from pageable host memory: "
    "the driver stages each through a pinned buffer and the copy does not overlap with other work. Pin the host "
    "tensors (pin_memory=True in the DataLoader, tensor.pin_memory()) and copy with non_blocking=True.",
    "slow-copies-waiting": "They are neither tiny nor pageable, so they are likely waiting: on the bus, shared with "
    "other copies or processes, or on the host memory they read (the slowest ran at {slowest_gbps:.2f}).",
}
