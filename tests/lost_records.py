"""A held-out case made from a real trace: a CUDA run whose device records were lost."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from conftest import SAMPLES

DEVICE_RECORDS = ("kernel", "gpu_memcpy", "gpu_memset")


def lost_records(tmp_path: Path, name: str = "h100-bert-small.json.gz") -> Path:
    """The sample with its kernel, memcpy and memset records deleted; launch calls and ac2g flows kept."""
    doc = json.loads(gzip.decompress((SAMPLES / name).read_bytes()))
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in DEVICE_RECORDS]
    out = tmp_path / "lost.json"
    out.write_text(json.dumps(doc))
    return out
