"""The real traces shipped inside the package (`tracetui demo`), and `demo:NAME`, which names one wherever a trace goes.

They live in `data/samples/` beside this module, so a wheel installed on a server with no trace of its own has
them; `ATTRIBUTION.md` there says where each comes from and carries the licences their authors require.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import TraceError

PREFIX = "demo:"  # demo:NAME names a shipped sample; a file of that name is ./demo:NAME
FOLDER = Path(__file__).resolve().parent / "data" / "samples"
ATTRIBUTION = FOLDER / "ATTRIBUTION.md"


@dataclass(frozen=True)
class Sample:
    """One shipped sample: its name (demo:NAME), what it shows, and whether it is a folder of ranks."""

    name: str
    what: str
    ranks: bool = False

    @property
    def path(self) -> Path:
        """Each sample in a folder of its own: the viewer offers a trace's neighbours as other captures of its run."""
        return FOLDER / self.name if self.ranks else FOLDER / self.name / f"{self.name}.json.gz"

    @property
    def size(self) -> int:
        """Bytes on disk (a folder of ranks: its traces together)."""
        if self.ranks:
            return sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())
        return self.path.stat().st_size


SAMPLES = (  # the first is what `tracetui demo` opens
    Sample("h100-bert-small", "H100 BERT inference, every profiler flag on"),
    Sample("a100-triton-small", "A100 torch.compile: Triton kernels"),
    Sample("b300-moe-small", "B300, CUDA 13.1: mixture-of-experts kernels"),
    Sample("mi250-rocm-train", "AMD MI250, ROCm 6.2: training, a cold step"),
    Sample("v100-2021-small", "V100 in 2021: the legacy categories"),
    Sample("cpu-only-gloo", "a CPU-only rank of a gloo job"),
    Sample("cpu-matmul-eager", "tracetui profile matmul_add on a CPU"),
    Sample("cpu-matmul-compiled", "the same with torch.compile: diff the two"),
    Sample("hta-2rank", "2 ranks of a 128-rank NCCL job: tracetui ranks", ranks=True),
)
DEFAULT = SAMPLES[0]


def names() -> list[str]:
    return [s.name for s in SAMPLES]


def sample(name: str) -> Sample:
    """The sample of that name; TraceError naming demo:NAME and the samples there are when none is."""
    for s in SAMPLES:
        if s.name == name:
            return s
    what = "no sample of that name is shipped with tracetui" if name else "the name of a sample goes after demo:"
    raise TraceError(f"{PREFIX}{name}", f"{what}; the samples: {', '.join(names())} (tracetui demo --list)")


def resolve(named: str | os.PathLike[str]) -> str:
    """The path a user named: demo:NAME becomes its shipped sample's path, anything else is returned as it is."""
    text = os.fspath(named)
    return str(sample(text[len(PREFIX) :]).path) if text.startswith(PREFIX) else text
