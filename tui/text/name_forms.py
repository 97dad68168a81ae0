"""Names that have a shape people read by, cut to a width as they read them: a Python frame keeps its file and
function (`torch/…/module.py(1743): _call_impl`), the code table's `func (file:line)` likewise, a built-in drops its
object's address, an annotation with parameters its last ones (`MoE[experts=64, tokens=16, …]`), a CuTe DSL kernel
reads as its class (`…FlashAttentionForwardSm100…`). names.py cuts
every other name (and these, when no form fits)."""

from __future__ import annotations

import re

ELLIPSIS = "…"

_FRAME = re.compile(r"^(?P<path>.*?)\((?P<line>\d+)\): (?P<func>\S.*)$")  # torch/nn/modules/module.py(1743): _call_impl
_LABEL = re.compile(r"^(?P<func>[^\s()]+) \((?P<path>[^()]*?):(?P<line>\d+)\)$")  # _call_impl (torch/nn/module.py:1743)
_BUILTIN = re.compile(
    r"^<built-in (?P<what>method|function) (?P<func>\S*)(?P<of> of .*?)?(?P<at> at 0x[0-9a-fA-F]+)?>$"
)
_PARAMS = re.compile(r"^(?P<head>[^\[\]]+)\[(?P<body>[^\[\]]*=[^\[\]]*)\]$")  # MoE[experts=64, tokens=16]
# A kernel the CuTe DSL (CUTLASS's Python DSL: FlashAttention 4, FlashInfer, QuACK) compiled: its symbol is the
# kernel's Python module (dots dropped) and class, then `_object_at_` and a mangling of its arguments' layouts
# (kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor…_0); the class
# is the first word that starts with a capital after the module's (lower-case) name.
_CUTE = re.compile(r"^kernel_cutlass_kernel_(?P<module>[^A-Z]*?)(?P<cls>[A-Z][A-Za-z0-9_]*?)_object_at_")
MIN_FILE = 8  # a frame's file cut no shorter than this before its line gives way


def read_all(names: list[str], width: int, exact: bool = False) -> dict[str, str]:
    """Python frames and built-ins read as people say them, cut to width (see _frame_cuts); exact: keep what tells
    frames of one function apart (the line)."""
    out = {}
    for n in set(names):
        if len(n) <= width:
            continue
        frame = _FRAME.match(n) or _LABEL.match(n)
        cuts = _frame_cuts(n, width, exact) if frame else _builtin_cuts(n, exact) if _BUILTIN.match(n) else None
        cuts = _params_cuts(n) if cuts is None and not exact and _PARAMS.match(n) else cuts
        cuts = _cute_cuts(n, width) if cuts is None and not exact and _CUTE.match(n) else cuts
        if cuts is not None:
            out[n] = next((c for c in cuts if len(c) <= width), "")
            if not out[n]:
                del out[n]  # nothing of its shape fits: cut as any name
    return out


def _frame_cuts(name: str, width: int, exact: bool) -> list[str]:
    """A frame `pkg/dirs/file.py(line): func` (or the code table's `func (pkg/dirs/file.py:line)`), shorter and
    shorter: the package and the file (`transformers/…/modeling_bert.py(364): forward`), the file
    (`…/module.py(1743): _call_impl`), the file cut at its end, then (unless exact) the same with the line left
    out (`inspect.py(…): _signature_from_callable`), and last the function alone, cut in the middle."""
    m = _FRAME.match(name) or _LABEL.match(name)
    assert m is not None
    path, line, func = m.group("path"), m.group("line"), m.group("func")
    dirs, _, file = path.rpartition("/")
    label = m.re is _LABEL

    def said(where: str, at: str) -> str:
        return f"{func} ({where}:{at})" if label else f"{where}({at}): {func}"

    out = []
    for at in (line, *(() if exact else (ELLIPSIS,))):
        out += [said(f"{dirs.split('/')[0]}/{ELLIPSIS}/{file}", at)] if "/" in dirs else []
        out += [said(f"{ELLIPSIS}/{file}", at)] if dirs else []
        out += [said(file, at)] if at == ELLIPSIS else []
        room = width - len(said("", at))
        out += [said(f"{file[: room - 1]}{ELLIPSIS}", at)] if room >= MIN_FILE and len(file) > room else []
    return out + ([] if exact else [f"{ELLIPSIS}: {func}" if not label else f"{func} ({ELLIPSIS})"])


def _params_cuts(name: str) -> list[str]:
    """An annotation with its parameters (`MoE[experts=64, tokens=16, topk=2]`), its last parameters left out one
    by one (`MoE[experts=64, tokens=16, …]`): the first say what it is."""
    m = _PARAMS.match(name)
    assert m is not None
    items, depth, start = [], 0, 0
    body = m.group("body")
    for k, ch in enumerate(body):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            items.append(body[start:k].strip())
            start = k + 1
    items.append(body[start:].strip())
    head = m.group("head")
    return [f"{head}[{', '.join(items[:k] + [ELLIPSIS])}]" for k in range(len(items) - 1, -1, -1)]


def _cute_cuts(name: str, width: int) -> list[str]:
    """A CuTe DSL kernel, shorter and shorter: its symbol up to its class, the arguments folded
    (`kernel_cutlass_kernel_flashinfernormkernelsfused_add_rmsnormFusedAddRMSNormKernel…`), its class and what says
    it is one (`cutlass_kernel…FusedAddRMSNormKernel…`), its class (`…FusedAddRMSNormKernel…`), its class cut in
    the middle (`…FusedAd…NormKernel…`). Kernels of one class told apart only by their arguments are cut as any
    name (exact)."""
    m = _CUTE.match(name)
    assert m is not None
    cls = m.group("cls")
    out = [
        f"{name[: m.end('cls')]}{ELLIPSIS}",
        f"cutlass_kernel{ELLIPSIS}{cls}{ELLIPSIS}",
        f"{ELLIPSIS}{cls}{ELLIPSIS}",
    ]
    return out + ([f"{ELLIPSIS}{_middle(cls, width - 2)}{ELLIPSIS}"] if width >= MIN_FILE else [])


def _builtin_cuts(name: str, exact: bool) -> list[str]:
    """A built-in, shorter: its object's address left out (`<built-in method encode of str object at 0x…>`),
    then what it is a method of (`<built-in method encode…>`), then `<built-in` itself. exact: built-ins that
    differ only in their object keep its address's last digits (`<…encode…cb0>`)."""
    m = _BUILTIN.match(name)
    assert m is not None
    what, func, of, at = m.group("what"), m.group("func"), m.group("of") or "", m.group("at") or ""
    if exact:
        return [f"<built-in {what} {func}{ELLIPSIS}{at[-4:]}>", f"<{ELLIPSIS}{func}{ELLIPSIS}{at[-4:]}>"] if at else []
    out = [f"<built-in {what} {func}{of} at 0x{ELLIPSIS}>"] if at else []
    out += [f"<built-in {what} {func}{ELLIPSIS}>"] if of or at else []
    return out + ([f"<{ELLIPSIS}{func}>"] if func else [])


def _middle(text: str, width: int) -> str:
    """Text cut in the middle to width: its start and its end, `…` between."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head = width // 2
    tail = width - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")
