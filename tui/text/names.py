"""Long names cut to fit a column: C++ kernel names read as their function and the template arguments that
tell rows apart, plain names as their words, cut in the middle with `…` (tables, the details panel, the overview)."""

from __future__ import annotations

import re

import numpy as np

from .fmt import truncate
from .name_forms import ELLIPSIS, read_all

_PIECES = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]+")


def short_name(name: str, limit: int = 100) -> str:
    """A long C++ kernel name with its template arguments and parameters folded: f<…>(…)."""
    if len(name) <= limit:
        return name
    if len(name) > _FOLD_FAST:
        return truncate(_folded(name, limit), limit)
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            if depth == 0:
                out.append(ch + "…")
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
            if depth == 0:
                out.append(ch)
        elif depth == 0:
            out.append(ch)
    return truncate("".join(out), limit)


_FOLD_FAST = 4096


def _folded(name: str, most: int) -> str:
    """short_name's folding in numpy, for a long name (megabytes cost milliseconds): its first `most` characters,
    or all of it when shorter. Brackets are ASCII, so the name is read as UTF-8 bytes, a block at a time, and cut
    only beside them."""
    data = name.encode("utf-8", "surrogatepass")
    pieces: list[bytes] = []
    size = 0
    walk, low, depth = 0, 0, 0  # carried from block to block: the walk, its lowest point, the depth
    for at in range(0, len(data), _BLOCK):
        b = np.frombuffer(data, np.uint8, min(_BLOCK, len(data) - at), at)
        opens = (b == 0x3C) | (b == 0x28)
        closes = (b == 0x3E) | (b == 0x29)
        w = walk + np.cumsum(opens.astype(np.int64) - closes)
        after = w - np.minimum(np.minimum.accumulate(np.minimum(w, low)), 0)  # the depth after each byte, never < 0
        before = np.concatenate([[depth], after[:-1]])
        walk, low, depth = int(w[-1]), min(low, int(w.min())), int(after[-1])
        for start, stop in _runs(np.flatnonzero(np.where(closes, after == 0, before == 0)), opens):
            pieces += [data[at + start : at + stop], _FOLD if opens[stop - 1] else b""]
            size += stop - start + 3
        if size > 4 * most + 4:  # enough bytes for `most` characters, however wide
            break
    return b"".join(pieces).decode("utf-8", "replace")


_FOLD = ELLIPSIS.encode()
_BLOCK = 1 << 20


def _runs(at: np.ndarray, opens: np.ndarray) -> list[tuple[int, int]]:
    """Positions as runs [start, stop), each ending where the next position is not the one after, or after an
    opening bracket (its `…` follows it)."""
    if not len(at):
        return []
    breaks = np.flatnonzero((np.diff(at) != 1) | opens[at[:-1]]) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [len(at)]])
    return [(int(at[a]), int(at[b - 1]) + 1) for a, b in zip(starts.tolist(), stops.tolist(), strict=True)]


def shorten_names(names: list[str], width: int) -> list[str]:
    """Names cut to width in the middle, keeping the words that tell them apart (never a word cut without '…').

    A C++ kernel name reads as its function and template arguments, without `void`, namespaces, lambdas and
    parameters (`elementwise_kernel<128, 4, …MulFunctor<float>…>(…)`); a plain name as its words. The function's
    name stays, then the words rarest among the rows of that function; a gap reads `…`. Names that come out
    alike are shortened again on the words that differ among them alone.
    """
    width = max(width, 1)
    shapes = {n: _shape(_weighed(n)) for n in set(names)}
    counts = _group_counts(shapes)
    read = read_all(names, width)
    out = [
        n if len(n) <= width else read[n] if n in read else _shorten(shapes[n], width, counts[_group(shapes[n])])
        for n in names
    ]
    tried: set[frozenset[str]] = set()
    for _ in range(4):
        groups: dict[str, list[int]] = {}
        for k, (full, short) in enumerate(zip(names, out, strict=True)):
            if full != short:
                groups.setdefault(short, []).append(k)
        whole = {full for full, short in zip(names, out, strict=True) if full == short}
        clashes = [ks for short, ks in groups.items() if len({names[k] for k in ks}) > 1 or short in whole]
        clashes = [ks for ks in clashes if frozenset(names[k] for k in ks) not in tried]
        if not clashes:
            break
        for ks in clashes:
            tried.add(frozenset(names[k] for k in ks))
            if all(names[k] in read for k in ks):  # Python frames alike once cut: keep their lines
                alike = read_all([names[k] for k in ks], width, exact=True)
                for k in ks:
                    shape = shapes[names[k]]
                    out[k] = alike.get(names[k]) or _shorten(shape, width, counts[_group(shape)])
                continue
            local = _word_counts([shapes[names[k]] for k in ks])
            for k in ks:
                shape = shapes[names[k]]
                out[k] = _shorten(shape, width, counts[_group(shape)], local)
    if len(set(out)) == len(shapes):
        return out
    apart = _apart(_views(names, shapes), out, width)
    return apart if len(set(apart)) == len(shapes) else _apart(names, out, width)


ANALYSED_CHARS = 8192  # a longer name is weighed by its first and last 4 KB (real kernel names: up to 5 KB)


def _weighed(name: str) -> str:
    """What of a name its words are weighed by: all of it, or its two ends when it is longer than ANALYSED_CHARS
    (a name of megabytes costs what one of 8 KB does, and reads as its start and its end)."""
    if len(name) <= ANALYSED_CHARS:
        return name
    half = ANALYSED_CHARS // 2
    return name[:half] + ELLIPSIS + name[-half:]


def _views(names: list[str], shapes: dict[str, _Shape]) -> list[str]:
    """What the last resort cuts: the names as read (`f<…>(…)`), or in full where two read alike."""
    flat = {n: _flat_name(s) for n, s in shapes.items()}
    owners: dict[str, int] = {}
    for f in flat.values():
        owners[f] = owners.get(f, 0) + 1
    views = {n: f if owners[f] == 1 else n for n, f in flat.items()}
    return [views[n] for n in names] if len(set(views.values())) == len(views) else names


def shorten(name: str, width: int) -> str:
    """One name cut to width in the middle (see shorten_names)."""
    return shorten_names([name], width)[0]


class _Node:
    """A name's head (its pieces: words with an id, separators with -1), template arguments and what follows."""

    __slots__ = ("args", "call", "ids", "items", "lossy", "trail", "words")

    def __init__(
        self, head: str, args: list[_Node] | None, call: bool, lossy: bool, ids: list[int], whole: int = 0
    ) -> None:
        pieces = ([head[:whole]] if whole else []) + _PIECES.findall(head[whole:])
        self.words = [(p, _next_id(ids) if p[0].isalnum() else -1) for p in pieces]
        self.args, self.call, self.lossy = args, call, lossy
        self.items: list[tuple[str, str, int]] = []  # (separator before, word, id)
        sep = ""
        for p, i in self.words:
            if i < 0:
                sep = p
            else:
                self.items.append((sep, p, i))
                sep = ""
        self.trail = sep if self.items else ""
        self.ids = frozenset(i for _, _, i in self.items)


_Unit = tuple[int, str, _Node, bool, str]  # id, text, node, named leaf, what it counts as


class _Shape:
    """A name as a tree of _Node (one node for a plain name) and its words in order: (id, text, node, leaf)."""

    __slots__ = ("cxx", "root", "units")

    def __init__(self, root: _Node, cxx: bool) -> None:
        self.root, self.cxx = root, cxx
        self.units: list[_Unit] = []
        self._walk(root, "")

    def _walk(self, node: _Node, path: str) -> None:
        """Words of a named argument count wherever they are; numbers and bools where they are (`<4, …>`)."""
        leaf = bool(path) and _is_leaf(node)
        where = path + ":" if path and _is_scalar(node) else ""
        words = [(i, p) for p, i in node.words if i >= 0]
        whole = "_" in words[0][1] if words else False  # a name kept whole, then its lambda's types: `(float)`
        self.units += [(i, p, node, leaf, ("λ" if whole and k else where) + p) for k, (i, p) in enumerate(words)]
        for k, a in enumerate(node.args or ()):
            self._walk(a, f"{path}.{k}")


def _next_id(ids: list[int]) -> int:
    ids[0] += 1
    return ids[0]


_WHOLE = re.compile(r"[A-Za-z]\w{0,31}")  # an argument's name short enough to keep whole (`direct_copy_kernel_cuda`)
_TOKENS = re.compile(r"::|[<>(){},]|[^:<>(){},]+|:")
_CXX = re.compile(r"(?:void )?(?:\(anonymous namespace\)::)?[A-Za-z_][\w:]*[<(]")
_SCALARS = frozenset(
    "true false bool char short int long float double half Half BFloat16 bfloat16_t half_t float16_t unsigned signed const"
    " int8_t uint8_t int16_t int32_t int64_t uint32_t uint64_t size_t bfloat16_t half_t".split()
)


def _shape(name: str) -> _Shape:
    """A C++ name parsed into its function and template arguments; anything else (or unparsable, or too big to
    weigh word by word: past MAX_DEPTH levels or MAX_UNITS words) stays plain, whose cost is linear in its length."""
    if _CXX.match(name) and (name.endswith(")") or name.endswith(">")):
        tokens = _TOKENS.findall(name.removeprefix("void "))
        try:
            if _depth(tokens) <= MAX_DEPTH:
                slots, end = _parse(tokens, 0, "")
                if len(slots) == 1:
                    shape = _Shape(_term(slots[0], [0], True), True)
                    if len(shape.units) <= MAX_UNITS:
                        return shape
        except (ValueError, IndexError):
            pass
    return _Shape(_Node(name, None, False, False, [0]), False)


MAX_DEPTH = 32  # template nesting a name is parsed to (real kernel names: under 10)
MAX_UNITS = 400  # words a C++ name is weighed by, each against the others (real kernel names: up to about 200)


def _depth(tokens: list[str]) -> int:
    """How deep the brackets of a tokenized name nest."""
    depth = most = 0
    for t in tokens:
        if t in "<({":
            depth += 1
            most = max(most, depth)
        elif t in ">)}":
            depth -= 1
    return most


def _parse(tokens: list[str], k: int, closer: str) -> tuple[list[list], int]:
    """Tokens from k up to closer as comma-separated slots of text and (open, slots) groups."""
    pairs = {"<": ">", "(": ")", "{": "}"}
    slots: list[list] = [[]]
    while k < len(tokens):
        t = tokens[k]
        if t == closer:
            return slots, k + 1
        if t in pairs:
            inner, k = _parse(tokens, k + 1, pairs[t])
            slots[-1].append((t, inner))
            continue
        if t in ">)}":
            raise ValueError(t)
        if t == ",":
            slots.append([])
        elif t.strip():
            slots[-1].append(t.strip())
        k += 1
    if closer:
        raise ValueError(closer)
    return slots, k


def _term(items: list, ids: list[int], outer: bool) -> _Node:
    """One template argument (or the whole name): its last named part with its arguments, namespaces dropped."""
    parts: list[list] = [[]]
    for it in items:
        parts.append([]) if it == "::" else parts[-1].append(it)
    named = [p for p in parts if p and not _noise(p)]
    if not named:
        return _Node(_flat(items), None, False, False, ids)
    main = max(range(len(named)), key=lambda j: (any(isinstance(x, tuple) for x in named[j]), j))
    first = named[main]
    if main < len(named) - 1 or not isinstance(first[0], str):
        return _Node("::".join(_flat(p) for p in named[main:]), None, False, False, ids)
    targs = next((g for o, g in (x for x in first if isinstance(x, tuple)) if o == "<"), None)
    params = any(isinstance(x, tuple) and x[0] == "(" for x in first)
    args = [_term(s, ids, False) for s in targs if s] if targs is not None else None
    after = parts[parts.index(first) + 1 :]
    lossy = not outer and (params or any(p and _noise(p) for p in after))
    types = _lambda_types(after) if args is None and not outer else ""
    whole = len(first[0]) if not outer and _WHOLE.fullmatch(first[0]) else 0
    return _Node(first[0] + (f"({types})" if types else ""), args, outer and params, lossy, ids, whole)


def _lambda_types(parts: list[list]) -> str:
    """The parameter types of the last lambda among parts (`{lambda(float)#1}` -> `float`): the dtype."""
    for part in reversed(parts):
        if part and isinstance(part[0], tuple) and part[0][0] == "{" and part[0][1]:
            group = next((x for x in part[0][1][0] if isinstance(x, tuple) and x[0] == "("), None)
            return ", ".join(_flat(s) for s in group[1] if s) if group else ""
    return ""


def _noise(part: list) -> bool:
    """A lambda, `operator()` or `(anonymous namespace)` part of a qualified name."""
    first = part[0]
    if isinstance(first, tuple):
        return first[0] == "{" or (first[0] == "(" and _flat(part) == "(anonymous namespace)")
    return first == "operator" or first.startswith("operator")


def _flat(items: list) -> str:
    """Items as text, namespaces dropped."""
    out = ""
    for it in items:
        if isinstance(it, tuple):
            close = {"<": ">", "(": ")", "{": "}"}[it[0]]
            out += it[0] + ", ".join(_flat(s) for s in it[1]) + close
        elif it == "::":
            out = re.sub(r"[A-Za-z_]\w*$", "", out)
        else:
            out += (" " if out and out[-1].isalnum() and it[0].isalnum() else "") + it
    return out


def _is_leaf(node: _Node) -> bool:
    """A named argument that is not a scalar and holds no named argument itself (`MulFunctor<float>`)."""
    return not _is_scalar(node) and all(not a.args and _is_scalar(a) for a in node.args or ())


def _is_scalar(node: _Node) -> bool:
    """A number, a bool or a scalar type (`2ul`, `false`, `unsigned int`, `bfloat16_t`, `char*`)."""
    words = [p for p, i in node.words if i >= 0]
    return all(w[0].isdigit() or w in _SCALARS for w in words) or "".join(p for p, _ in node.words) in _SCALARS


def _group(shape: _Shape) -> str:
    """Rows are told apart within their function (all plain names are one group)."""
    return "".join(p for p, _ in shape.root.words) if shape.cxx else ""


def _group_counts(shapes: dict[str, _Shape]) -> dict[str, dict[str, int]]:
    by: dict[str, list[_Shape]] = {}
    for s in shapes.values():
        by.setdefault(_group(s), []).append(s)
    return {g: _word_counts(ss) for g, ss in by.items()}


def _word_counts(shapes: list[_Shape]) -> dict[str, int]:
    """In how many of the names each word occurs."""
    unique = {id(s): s for s in shapes}
    counts: dict[str, int] = {"": len(unique)}
    for s in unique.values():
        for w in {u[4] for u in s.units}:
            counts[w] = counts.get(w, 0) + 1
    return counts


class _Plan:
    """The words of a name in the order they are tried, in phases: a C++ name's function's last two words
    (`tail`); its rarest argument word among the rows of its function (`picks[0]`, named leaves like
    `MulFunctor` first) and, in a second pass, among the rows it came out alike with (`picks[1]`); `(…)`; the
    function's other words; every other word (`rest`), rare ones first, then in order. A plain name: a word
    rare among the names it came out alike with, its last and first words, the others."""

    def __init__(self, shape: _Shape, counts: list[dict[str, int]]) -> None:
        outer = [u for u in shape.units if u[2] is shape.root]
        self.cxx = shape.cxx
        self.shared = counts[0].get("", 0) > 1  # other rows have its function: cut words to tell it from them
        if not shape.cxx:
            self.rest = _by(outer[1:-1], counts)
            self.picks = [[u for u in _by(outer, c) if _rare(u, c[0])] for c in [counts[1:]] if c]
            self.tail = outer[-1:] + outer[:1] if len(outer) > 1 else outer
            return
        args = [u for u in shape.units if u[2] is not shape.root]
        self.tail = outer[-1:] + outer[-2:-1]
        self.picks = [
            [u for u in _by(args, counts[k:]) if _rare(u, counts[k]) and (k or not u[4].startswith("λ"))]
            for k in range(len(counts))
        ]
        self.call: list[_Unit] = [(_CALL, "(…)", shape.root, False, "")] if shape.root.call else []
        self.head = outer[:1] + outer[-3:0:-1] if len(outer) > 2 else []  # its first word, then from the end
        self.rest = _by(args, counts)

    def phases(self, local_first: bool) -> list[tuple[list[_Unit], int]]:
        """(words, how many of them to keep at most) in order."""
        if not self.cxx:
            return [(p, 1) for p in self.picks] + [(self.tail, 2), (self.rest, len(self.rest))]
        picks = [(p, 1) for p in (self.picks[::-1] if local_first else self.picks)]
        return [(self.tail, 2), *picks, (self.call, 1), (self.head, len(self.head)), (self.rest, len(self.rest))]


_CALL = 0  # the id of a C++ name's parameters, `(…)`


def _rare(u: _Unit, counts: dict[str, int]) -> bool:
    """The word is not on every row."""
    return counts.get(u[4], 0) < counts[""]


def _by(units: list[_Unit], counts: list[dict[str, int]]) -> list[_Unit]:
    """Rare words first (named leaves before the rest, the rarest in the first counts, then the next), then
    the words every row has, in order."""
    first, n = counts[0], counts[0][""]
    keys = [
        (c >= n, c < n and not u[3], c, *(o.get(u[4], 0) for o in counts[1:]))
        for u in units
        for c in [first.get(u[4], 0)]
    ]
    return [units[k] for k in sorted(range(len(units)), key=keys.__getitem__)]


def _shorten(shape: _Shape, width: int, counts: dict[str, int], local: dict[str, int] | None = None) -> str:
    """The name within width. In a second pass (local: the words of the rows it came out alike with), a word
    rare among those goes in after the function's rarest word, or before it where both do not fit."""
    plan = _Plan(shape, [counts] if local is None else [counts, local])
    text, parted = _fill(shape, width, plan, False, local is None)
    if not parted:
        text, _ = _fill(shape, width, plan, True, False)
    best = _telling(plan)
    if best is not None and plan.shared and not _shown(text, best[1]) and len(plan.tail) > 1:
        plan.tail = plan.tail[:1]  # the function's name is shared by the rows: give its room to what tells them apart
        shorter, _ = _fill(shape, width, plan, not parted, local is None)
        text = shorter if _shown(shorter, best[1]) > _shown(text, best[1]) else text
    return text or _plain_cut(_flat_name(shape), width)


def _telling(plan: _Plan) -> _Unit | None:
    """A C++ name's word that best tells it from the other rows of its function: its rarest named argument
    (`CUDAFunctor_add`, `GeluCUDAKernelImpl`), when it has one."""
    if not plan.cxx or not plan.picks or not plan.picks[0]:
        return None
    first = plan.picks[0][0]
    return first if first[3] else None


def _shown(text: str, word: str) -> int:
    """How much of the word the text shows: all of it, or the part before its cut (`CUDAFunctor…`), or 0."""
    if word in text:
        return len(word)
    return max((len(c) - 1 for c in _cuts(word) if c in text), default=0)


def _cuts(word: str) -> list[str]:
    """A word cut shorter, most telling first: its start and its last snake_case part (`CUDA…add`), longest first,
    then its start alone (`CUDAFunctor…`, `GeluCUDA…`)."""
    last = word.rsplit("_", 1)[1] if "_" in word.strip("_") else ""
    heads = _prefixes(word)
    ends = [f"{h}{ELLIPSIS}{last}" for h in heads if last and not h.endswith(last)]
    return [c for c in ends if len(c) < len(word)] + [h + ELLIPSIS for h in heads]


def _prefixes(word: str, at: str = "") -> list[str]:
    """A word's leading parts, longest first, cut at underscores or capitals (`GeluCUDAKernelImpl`: `GeluCUDAKernel`,
    `GeluCUDA`, `Gelu`), or at underscores alone with at="_" (`direct_copy_kernel`: `direct_copy`, `direct`)."""
    word = word[:_PREFIX_CHARS]  # a head longer than any column is never shown: the cost stays linear in the word
    parts = re.split(r"(_)", word) if at == "_" else re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|_", word)
    out = []
    for j in range(len(parts) - 1, 0, -1):
        head = "".join(parts[:j]).rstrip("_")
        if head and head not in out:
            out.append(head)
    return out


_PREFIX_CHARS = 512


def _fill(shape: _Shape, width: int, plan: _Plan, local_first: bool, first_pass: bool) -> tuple[str, bool]:
    """Keep words phase by phase while the name fits width, and whether a locally rare word is in. An
    argument's word brings the rest of its name's words (rarest first) while they fit; in the first pass a
    name's later words stop at the first that does not (the start and end stay, the middle is cut)."""
    kept: set[int] = set()
    cut: dict[int, str] = {}
    best = ""
    stopped: set[int] = set()

    def fits(uid: int, text: str) -> bool:
        nonlocal best
        cand = "" if best and len(best) + len(text) - 1 > width else _show(shape.root, kept | {uid}, cut, True)
        if cand and len(cand) <= width:
            kept.add(uid)
            best = cand
        return uid in kept

    def keep(uid: int, text: str) -> bool:
        """The word, or a whole name's first words (`direct_copy…`, `GeluCUDA…`)."""
        if fits(uid, text):
            return True
        for short in _cuts(text) if plan.shared else [h + ELLIPSIS for h in _prefixes(text, "_")]:
            cut[uid] = short
            if fits(uid, short):
                return True
        cut.pop(uid, None)
        return False

    for units, most in plan.phases(local_first):
        taken = 0
        for uid, text, node, _, _ in units:
            if taken >= most:
                break
            if uid in kept or id(node) in stopped:
                continue
            if keep(uid, text):
                taken += 1
                if node is not shape.root:
                    all(keep(u[0], u[1]) for u in plan.rest if u[2] is node and u[0] not in kept)
                    stopped.add(id(node))
            elif most > 1 and first_pass:
                stopped.add(id(node))
    local = plan.picks[-1] if len(plan.picks) > 1 or not plan.cxx and plan.picks else []
    return best, not local or any(u[0] in kept for u in local)


def _flat_name(shape: _Shape) -> str:
    return _show(shape.root, {u[0] for u in shape.units}, {}, True)


def _plain_cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def _show(node: _Node, kept: set[int], cut: dict[int, str], outer: bool = False) -> str:
    """The node with only the kept words (some cut: `direct_copy…`); what is left out reads `…`."""
    head = _show_words(node, kept, cut)
    inner = _show_args(node.args, kept, cut) if node.args is not None else ""
    if head:
        text = head + (_angle(inner, node.args, outer) if node.args is not None else "")
        text += ("(…)" if _CALL in kept else ELLIPSIS) if node.call else ELLIPSIS if node.lossy else ""
    else:
        text = ELLIPSIS + inner + (ELLIPSIS if node.call or node.lossy else "") if inner else ""
    if outer:
        text = text or ELLIPSIS
        while ELLIPSIS * 2 in text:
            text = text.replace(ELLIPSIS * 2, ELLIPSIS)
    return text


def _angle(inner: str, args: list[_Node], outer: bool) -> str:
    """`<inner>`; an argument whose arguments are all left out reads `f…`, the function `f<…>`."""
    if inner or not args:
        return "<" + inner + ">"
    return "<…>" if outer else ELLIPSIS


def _show_args(args: list[_Node], kept: set[int], cut: dict[int, str]) -> str:
    parts = [_show(a, kept, cut) or ELLIPSIS for a in args]
    if all(p == ELLIPSIS for p in parts):
        return ""
    text = _GAPS.sub(ELLIPSIS, ", ".join(parts))
    return ELLIPSIS + text[3:] if text.startswith("…, ") else text


_GAPS = re.compile("…(?:, …)+")


def _show_words(node: _Node, kept: set[int], cut: dict[int, str]) -> str:
    """The kept words of a head with the separators between them; a run of left-out words is one `…`. Costs the
    kept words, not the head's (a node's word ids are consecutive), so trying words one by one stays linear."""
    if node.ids.isdisjoint(kept):
        return ""
    items, base = node.items, node.items[0][2]
    n = len(items)
    at = (
        sorted(u - base for u in kept if 0 <= u - base < n)
        if len(kept) < n
        else [k for k in range(n) if items[k][2] in kept]
    )
    out: list[str] = []
    prev, seen = -1, False
    for k in at:
        if k > prev + 1:
            out.append(ELLIPSIS)
        sep, word, uid = items[k]
        if sep and (seen or k == 0 or "(" in sep):
            out.append(sep)
        out.append(cut.get(uid, word))
        prev, seen = k, True
    out.append(ELLIPSIS if prev < n - 1 else node.trail)
    return "".join(out)


def _apart(names: list[str], out: list[str], width: int) -> list[str]:
    """Names still alike after the words: each shows short windows at the places it parts from the others."""
    windowed: set[str] = set()
    for _ in range(4):
        groups: dict[str, set[str]] = {}
        for full, short in zip(names, out, strict=True):
            groups.setdefault(short, set()).add(full)
        alike = {full for g in groups.values() if len(g) > 1 for full in g}
        if not alike - windowed:
            break
        windowed |= alike
        paths = _partings(sorted(windowed), 0)
        out = [
            _windows(full, paths[full], width) if full in paths else short
            for full, short in zip(names, out, strict=True)
        ]
    return out


def _partings(group: list[str], start: int) -> dict[str, list[int]]:
    """Per name, the positions where it parts from the rest of its group, splitting the group at each."""
    if len(group) == 1:
        return {group[0]: []}
    d = start
    while all(len(n) > d for n in group) and len({n[d] for n in group}) == 1:
        d += 1
    parts: dict[str, list[str]] = {}
    for n in group:
        parts.setdefault(n[d] if len(n) > d else "", []).append(n)
    out = {}
    for part in parts.values():
        for name, path in _partings(part, d + 1).items():
            out[name] = [d, *path]
    return out


def _windows(name: str, points: list[int], width: int) -> str:
    """The name's text around each parting point (as many as fit, the deepest first), joined by '…'."""
    points = [p for p in points if p > 0] or points
    if not points:
        return name if len(name) <= width else name[: width - 1] + ELLIPSIS
    for n in range(len(points), 0, -1):
        size = (width - n - 1) // n
        if size >= 3 or n == 1:
            break
    points = points[-n:]
    out, end = "", 0
    for p in points:
        a = max(p - 1, end)
        if a >= len(name):
            break
        out += (ELLIPSIS if a > end or (a and not out) else "") + name[a : a + max(size, 1)]
        end = a + max(size, 1)
    text = out + (ELLIPSIS if end < len(name) else "")
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS
