"""--gpu NAME: the entry of the GPU table (tui/model/data/gpus.toml) a name means, matched as people type it.

Case, spaces, dashes and underscores do not matter, and any part of a name will do as long as it names one
GPU: `a100`, `h100 sxm`, `sxm h100`, `MI300X`. A part that several GPUs share is refused with the
candidates one per line. A part that names one GPU sold in several forms (`a100`: SXM4 and PCIe, 40 and 80
GB) means its SXM part, the one the datasheets lead with, and the command line says which it took.
"""

from __future__ import annotations

import re

from ..model.analyses.roofline.peaks import Device, PeaksError, table


def _key(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).lower()


FORMS = re.compile(r"^(SXM\d*|PCIe|NVL|\(.*|\d+GB)$", re.IGNORECASE)  # how a model is sold, not which model


def model(name: str) -> str:
    """A GPU's model: its entry's name up to the form it is sold in (`A100 SXM4 80GB` -> `A100`, `GeForce RTX 4090`)."""
    words = []
    for w in name.split():
        if FORMS.match(w) or w.startswith("("):
            break
        words.append(w)
    return " ".join(words) or name


def _family(name: str) -> str:
    return _key(model(name))


def match_gpu(name: str) -> tuple[Device, str]:
    """The entry name means, and a note when it stood for several forms of one GPU ('' otherwise).

    PeaksError for a name that matches nothing (the models are listed) or several GPUs (each entry on its line).
    """
    entries = [e.device for e in table()]
    whole = _key(name)
    exact = [d for d in entries if _key(d.name) == whole]
    if exact:
        return exact[0], ""
    words = [_key(w) for w in name.split() if _key(w)]
    found = [d for d in entries if words and all(w in _key(d.name) for w in words)]
    same_model = [d for d in found if _family(d.name) == whole]  # `mi250` is the MI250, not also the MI250X
    found = same_model or found
    if not found:
        models = ", ".join(dict.fromkeys(model(d.name) for d in entries))
        raise PeaksError(f"unknown GPU {name!r}; known: {models}")
    if len({_family(d.name) for d in found}) > 1:
        listed = "\n".join(f"  {d.name}" for d in found)
        raise PeaksError(f"--gpu {name!r} matches {len(found)} GPUs; name one of them:\n{listed}")
    pick = next((d for d in found if "sxm" in _key(d.name)), found[0])
    if len(found) == 1:
        return pick, ""
    others = ", ".join(d.name for d in found if d is not pick)
    return pick, f"--gpu {name} taken as the {pick.name} (also in the table: {others}; name one to choose it)"
