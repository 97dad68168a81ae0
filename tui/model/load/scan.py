"""A compiled scan of one chunk of Kineto events straight into columns (numba): no Python object per event.

It reads what schema.py's typed decode reads, for the phases that make columns (X, i, I, s, f, t) and the
ones that only need counting or a metadata look (M and the other Chrome phases: their byte spans are kept,
for msgspec to decode them one by one). It checks the whole chunk as strict JSON while it goes, and gives
up (returns a reason code, never a guess) on anything the typed decode would read differently or reject:
an escape in a key, a string where a number goes, a float where an int goes, a number a double cannot hold
exactly from its digits, an int past 18 digits, a key twice, nesting past MAX_DEPTH, a counter or an unknown
phase. scanned.py then hands the chunk to msgspec (decode.py), so every column is the same whichever path
reads it; the tests compare the two on every sample and shared trace.

Every byte is read at an unsigned index (b[np.uint64(i)]): numba then leaves out the check for a negative
index that each signed one costs (9% of the scan's time; every index here is past a bound check already). A string's
plain bytes are passed, hashed and compared eight at a time (one unaligned 8-byte read, _load8), where eight are left
in the chunk: with value strings read inline as keys are, the kernel takes 0.81-0.83x the time it took byte by
byte (RESULTS.md, round 16). A value the columns do not read is checked by _value, which reads the ',' or the
closing byte after each value at once and keeps no grammar state between tokens: 1.5-1.8x as fast alone, 0.97x the
kernel's time (round 17).

Strings are kept as (start, length, has an escape) into the chunk's bytes, with a 64-bit hash to group equal
ones; grouping compares every member with its group's first byte for byte (`first_seen`), so two strings that
share a hash are still told apart.
"""

from __future__ import annotations

import sys
from typing import Any

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from . import schema

if sys.byteorder != "little":  # the 8-byte reads below find a byte by its place in a little-endian word
    raise ImportError("the compiled scan reads bytes eight at a time as little-endian words")

MAX_DEPTH = 48  # deeper than any profiler writes; limits.NESTING (64) is the msgspec path's

# Columns of the int table, one row per event.
CODE, PHASE, EV_START, EV_END = 0, 1, 2, 3
NAME, CAT, PID, TID, DIMS, DIMS_OLD = 4, 7, 10, 14, 18, 20  # a string is (start, length, escape); ids as below
PID_KIND, TID_KIND = 13, 17  # 0: an int (its value in the start column), 1: a string
EXT, EXT_OLD, CORR, PY_ID, PY_PARENT, NBYTES = 22, 23, 24, 25, 26, 27
MEM = 28  # Bytes, Device Type, Device Id, Total Allocated, Total Reserved, Addr: 28..33
FLOW_ID = 34
INTS = 35
# Hash columns: name, cat, pid string, tid string (input dims are hashed by span_hashes, only where an event has them)
H_NAME, H_CAT, H_PID, H_TID = 0, 1, 2, 3
HASHES = 4
# Float columns: ts (NaN when absent), dur
F_TS, F_DUR = 0, 1

# Why a chunk was not scanned (0: it was).
REASONS = (
    "",
    "not strict JSON",
    "an event that is not an object",
    "a key with an escape or a key twice",
    "a field of an unexpected type",
    "a number not read exactly",
    "a counter or an unknown phase",
    "nested too deep",
    "more events than room",
)
BAD_JSON, NOT_OBJECT, BAD_KEY, BAD_TYPE, INEXACT, PHASE_UNREAD, TOO_DEEP, NO_ROOM = range(1, 9)

_KEY_NAMES = (
    # event level: 0-8
    "ph",
    "name",
    "cat",
    "pid",
    "tid",
    "ts",
    "dur",
    "args",
    "id",
    # args: 9-22
    "External id",
    "external id",
    "correlation",
    "Python id",
    "Python parent id",
    "Input Dims",
    "Input dims",
    "bytes",
    "Bytes",
    "Device Type",
    "Device Id",
    "Total Allocated",
    "Total Reserved",
    "Addr",
)
_KEYS = len(_KEY_NAMES)
_EVENT_KEYS, _ARG_KEYS = 9, _KEYS - 9
_KEY_LEN = np.array([len(k) for k in _KEY_NAMES], np.int64)
_KEY_BYTES = np.zeros((len(_KEY_NAMES), max(map(len, _KEY_NAMES))), np.uint8)
for _k, _name in enumerate(_KEY_NAMES):
    _KEY_BYTES[_k, : len(_name)] = np.frombuffer(_name.encode(), np.uint8)
# The known keys by (length, first byte): the first such key, then the next of the same length and first byte.
_KEY_AT = np.full((32, 256), -1, np.int64)
_KEY_NEXT = np.full(len(_KEY_NAMES), -1, np.int64)
for _k in range(len(_KEY_NAMES) - 1, -1, -1):
    _at = (len(_KEY_NAMES[_k]), ord(_KEY_NAMES[_k][0]))
    _KEY_NEXT[_k], _KEY_AT[_at] = _KEY_AT[_at], _k
# Each phase letter's code, as schema.py numbers them (-1: refused; a counter's args are read by msgspec alone).
_PHASE_OF = np.full(256, -1, np.int64)
for _letter, _cls in schema.BY_PHASE.items():
    if _cls is not schema.Counter:
        _PHASE_OF[ord(_letter)] = _cls.code
# The keys each phase's Struct reads (schema.py): a value of a type it does not take there refuses the chunk.
_READ = np.zeros((schema.OTHER + 1, _KEYS), np.bool_)
_EVERY_PHASE = ("name", "pid", "tid", "ts")
for _phase_code, _phase_keys in (
    (schema.Duration.code, ("cat", "dur", "args", *_KEY_NAMES[_EVENT_KEYS : _EVENT_KEYS + 8])),
    (schema.Instant.code, ("args", *_KEY_NAMES[_EVENT_KEYS + 8 :])),
    (schema.GlobalInstant.code, ("args", *_KEY_NAMES[_EVENT_KEYS + 8 :])),
    (schema.FlowStart.code, ("cat", "id")),
    (schema.FlowEnd.code, ("cat", "id")),
    (schema.FlowStep.code, ("cat", "id")),
    (schema.Metadata.code, ("args",)),
    (schema.OTHER, ()),
):
    for _read_key in _EVERY_PHASE + _phase_keys:
        _READ[_phase_code, _KEY_NAMES.index(_read_key)] = True
_POW10 = np.array([10.0**k for k in range(23)], np.float64)  # exact doubles up to 1e22
_ESCAPES = np.zeros(256, np.bool_)
for _c in b'"\\/bfnrtu':
    _ESCAPES[_c] = True
_HEX = np.zeros(256, np.bool_)
for _c in b"0123456789abcdefABCDEF":
    _HEX[_c] = True

# Number kinds
N_BAD, N_INT, N_FLOAT = 0, 1, 2
_EXACT = 1 << 53
_FNV_BASIS = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)

_jit = nb.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
# The helpers called once or more per token are inlined where they are called (numba inlines its own IR; LLVM does
# not inline across numba functions): a call costs more than a short helper's work. Measured in RESULTS.md
# ("Round 13"): the scan 1.3-1.4x as fast, its first compile about 2.5x as long (once; numba caches it).
_inline = nb.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy", inline="always")


def _load8_typed(typingctx, arr, idx):
    """_load8(b, i): the 8 bytes at b[i:i+8] as one little-endian word, read wherever they lie (the caller checks
    that i + 8 <= len(b))."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and isinstance(idx, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        word = builder.load(builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(64).as_pointer()))
        word.align = 1  # an unaligned read: one instruction on x86-64 and arm64
        return word

    return types.uint64(arr, idx), codegen


_load8: Any = intrinsic(_load8_typed)
_trailing_zeros: Any = trailing_zeros  # an intrinsic (LLVM's cttz) typed for numba alone
_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_QUOTES = np.uint64(0x2222222222222222)
_BACKSLASHES = np.uint64(0x5C5C5C5C5C5C5C5C)
_CONTROLS = np.uint64(0x2020202020202020)


@_inline
def _stop8(w):
    """The place (0-7) of the first byte of the word w that ends a string's plain run ('"', a backslash or a control
    byte below 0x20), or 8 where none does. Each test flags the first such byte exactly (a flag can be wrong only
    above a true one), so the lowest flag of the three is the first stop."""
    q = w ^ _QUOTES
    s = w ^ _BACKSLASHES
    m = (((q - _ONES) & ~q) | ((s - _ONES) & ~s) | ((w - _CONTROLS) & ~w)) & _HIGHS
    if m == 0:
        return 8
    return np.int64(_trailing_zeros(m)) >> 3


@_inline
def _ws(b, i, n):
    while i < n:
        c = b[np.uint64(i)]
        if c != 32 and c != 10 and c != 13 and c != 9:
            return i
        i += 1
    return i


@_jit
def _string(b, i, n):
    """b[i] is '"': the index after the closing quote (-1: not a valid string), and whether it holds an escape."""
    i += 1
    esc = False
    while i < n:
        if i + 8 <= n:  # eight bytes at a time up to the first that is not plain
            k = _stop8(_load8(b, i))
            i += k
            if k == 8:
                continue
        c = b[np.uint64(i)]  # an unsigned index: no check for a negative one per byte
        if c > 92 or 34 < c < 92 or 32 <= c < 34:
            i += 1
            continue
        if c == 34:
            return i + 1, esc
        if c < 32 or i + 1 >= n or not _ESCAPES[b[np.uint64(i + 1)]]:
            return -1, esc
        if b[np.uint64(i + 1)] == 117:  # \uXXXX, or a pair \uD8xx\uDCxx (a lone surrogate fails, as in msgspec)
            if i + 5 >= n or not _hex4(b, i + 2):
                return -1, esc
            if _surrogate(b, i + 2) == 1:
                if i + 11 >= n or b[np.uint64(i + 6)] != 92 or b[np.uint64(i + 7)] != 117:
                    return -1, esc
                if not _hex4(b, i + 8) or _surrogate(b, i + 8) != 2:
                    return -1, esc
                i += 6
            elif _surrogate(b, i + 2) == 2:
                return -1, esc
            i += 6
        else:
            i += 2
        esc = True
    return -1, esc


@_jit
def _hex4(b, i):
    """Whether b[i:i+4] are four hex digits."""
    return (
        _HEX[b[np.uint64(i)]] and _HEX[b[np.uint64(i + 1)]] and _HEX[b[np.uint64(i + 2)]] and _HEX[b[np.uint64(i + 3)]]
    )


@_jit
def _surrogate(b, i):
    """The four hex digits at b[i] as UTF-16: 0 a character, 1 a high surrogate (D800-DBFF), 2 a low one (DC00-DFFF)."""
    if (b[np.uint64(i)] | 32) != 100:  # d or D
        return 0
    c = b[np.uint64(i + 1)] | 32
    if c == 56 or c == 57 or c == 97 or c == 98:  # 8 9 a b
        return 1
    return 2 if 99 <= c <= 102 else 0  # c d e f


@_jit
def _digits(b, i, n, mant, digits):
    """The digits from b[i]: (past them, the mantissa with the first 18 of all the digits read, how many in all)."""
    while i < n and 48 <= b[np.uint64(i)] <= 57:
        if digits < 18:
            mant = mant * 10 + (b[np.uint64(i)] - 48)
        digits += 1
        i += 1
    return i, mant, digits


@_jit
def _number(b, i, n):
    """A JSON number at b[i]: (end (-1: not a number), kind, int value, float value, exact)."""
    start = i
    neg = False
    if i < n and b[np.uint64(i)] == 45:
        neg = True
        i += 1
    if i >= n or not (48 <= b[np.uint64(i)] <= 57):
        return -1, N_BAD, 0, 0.0, False
    if b[np.uint64(i)] == 48 and i + 1 < n and 48 <= b[np.uint64(i + 1)] <= 57:
        return -1, N_BAD, 0, 0.0, False  # a leading zero
    i, mant, digits = _digits(b, i, n, 0, 0)
    frac = 0
    kind = N_INT
    if i < n and b[np.uint64(i)] == 46:
        kind = N_FLOAT
        if i + 1 >= n or not (48 <= b[np.uint64(i + 1)] <= 57):
            return -1, N_BAD, 0, 0.0, False
        end, mant, all_digits = _digits(b, i + 1, n, mant, digits)
        frac, digits, i = all_digits - digits, all_digits, end
    exact = digits <= 18 and mant <= _EXACT and frac <= 22
    if i < n and (b[np.uint64(i)] == 101 or b[np.uint64(i)] == 69):  # an exponent: valid JSON, not read here
        kind = N_FLOAT
        exact = False
        i += 1
        if i < n and (b[np.uint64(i)] == 43 or b[np.uint64(i)] == 45):
            i += 1
        if i >= n or not (48 <= b[np.uint64(i)] <= 57):
            return -1, N_BAD, 0, 0.0, False
        while i < n and 48 <= b[np.uint64(i)] <= 57:
            i += 1
    if i == start:
        return -1, N_BAD, 0, 0.0, False
    value = 0.0
    if kind == N_FLOAT and exact:
        value = float(mant) / _POW10[frac]
    elif exact:
        value = float(mant)
    if neg:
        mant = -mant
        value = -value
    if kind == N_INT and digits > 18:
        exact = False
    return i, kind, mant, value, exact


@_inline
def _num(b, i, n):
    """_number's common case, read where it is called: digits, maybe a point and digits, 18 digits in all at most,
    no sign, no exponent, no leading zero, a mantissa within 2**53. Anything else is _number's, so the two read
    every number alike (test_scan.py compares them)."""
    j = i
    mant = 0
    while j < n and 48 <= b[np.uint64(j)] <= 57:
        mant = mant * 10 + (b[np.uint64(j)] - 48)
        j += 1
    whole = j - i
    if whole == 0 or whole > 18 or (whole > 1 and b[np.uint64(i)] == 48):
        return _number(b, i, n)
    kind = N_INT
    frac = 0
    if j < n and b[np.uint64(j)] == 46:
        k = j + 1
        while k < n and 48 <= b[np.uint64(k)] <= 57:
            mant = mant * 10 + (b[np.uint64(k)] - 48)
            k += 1
        frac = k - j - 1
        if frac == 0 or whole + frac > 18:
            return _number(b, i, n)
        kind = N_FLOAT
        j = k
    if (j < n and (b[np.uint64(j)] | 32) == 101) or mant > _EXACT:
        return _number(b, i, n)
    return j, kind, mant, float(mant) / _POW10[frac], True


@_jit
def _skip_number(b, i, n):
    """Pass over a JSON number at b[i] (its end, -1: not one), reading no value."""
    if b[np.uint64(i)] == 45:
        i += 1
    if i >= n or not (48 <= b[np.uint64(i)] <= 57):
        return -1
    if b[np.uint64(i)] == 48:
        i += 1
        if i < n and 48 <= b[np.uint64(i)] <= 57:
            return -1
    while i < n and 48 <= b[np.uint64(i)] <= 57:
        i += 1
    if i < n and b[np.uint64(i)] == 46:
        i += 1
        if i >= n or not (48 <= b[np.uint64(i)] <= 57):
            return -1
        while i < n and 48 <= b[np.uint64(i)] <= 57:
            i += 1
    if i < n and (b[np.uint64(i)] == 101 or b[np.uint64(i)] == 69):
        i += 1
        if i < n and (b[np.uint64(i)] == 43 or b[np.uint64(i)] == 45):
            i += 1
        if i >= n or not (48 <= b[np.uint64(i)] <= 57):
            return -1
        while i < n and 48 <= b[np.uint64(i)] <= 57:
            i += 1
    return i


@_inline
def _pass_number(b, i, n):
    """_skip_number's common case, read where it is called: digits with no leading zero, maybe a point and digits,
    then no exponent, before the chunk's end. Anything else is _skip_number's."""
    j = i
    while j < n and 48 <= b[np.uint64(j)] <= 57:
        j += 1
    if j == i or j >= n or (j - i > 1 and b[np.uint64(i)] == 48):
        return _skip_number(b, i, n)
    if b[np.uint64(j)] == 46:
        k = j + 1
        while k < n and 48 <= b[np.uint64(k)] <= 57:
            k += 1
        j = k if k > j + 1 else i  # no digit after the point: _skip_number says so
    if j == i or j >= n or (b[np.uint64(j)] | 32) == 101:
        return _skip_number(b, i, n)
    return j


_TRUE, _FALSE, _NULL = (np.frombuffer(word, np.uint8) for word in (b"true", b"false", b"null"))


@_jit
def _word(b, i, n, word):
    """Whether the bytes at b[i] are word."""
    if i + len(word) > n:
        return False
    for k in range(len(word)):
        if b[np.uint64(i + k)] != word[k]:
            return False
    return True


@_jit
def _literal(b, i, n):
    """true, false or null at b[i]: (end or -1, 0 false / 1 true / 2 null)."""
    if _word(b, i, n, _TRUE):
        return i + 4, 1
    if _word(b, i, n, _FALSE):
        return i + 5, 0
    if _word(b, i, n, _NULL):
        return i + 4, 2
    return -1, 0


@_jit
def _value(b, i, n, stack):
    """Check and pass over any JSON value at b[i]: its end, or -1 (not strict JSON) / -2 (nested too deep).
    A stack of open containers (1: an object); after each value, the ',' or the closing byte that may follow it is
    read at once, and after a ',' in an object, the next key and its colon: no state is kept between tokens."""
    depth = 0
    i = _ws(b, i, n)
    while True:
        if i < 0 or i >= n:  # a value at b[i] (i < 0: a key before it was not `"key" :`)
            return -1
        c = b[np.uint64(i)]
        if c == 34:
            i = _any_string(b, i, n)
        elif c == 123 or c == 91:
            if depth == MAX_DEPTH:
                return -2
            is_obj = c == 123
            stack[depth] = is_obj
            depth += 1
            i = _ws(b, i + 1, n)
            if i >= n:
                return -1
            c = b[np.uint64(i)]
            if c != (125 if is_obj else 93):
                if is_obj:
                    i = _colon_after_key(b, i, n)
                continue
            depth -= 1  # {} or []
            i += 1
        elif c == 45 or 48 <= c <= 57:
            i = _pass_number(b, i, n)
        else:
            i, _ = _literal(b, i, n)
        if i < 0 or depth == 0:
            return i
        while True:  # after a value: a ',' and the next member, or the closing byte of its container
            i = _ws(b, i, n)
            if i >= n:
                return -1
            c = b[np.uint64(i)]
            is_obj = stack[depth - 1] == 1
            if c == 44:
                i = _ws(b, i + 1, n)
                if is_obj:
                    i = _colon_after_key(b, i, n)
                break
            if c != (125 if is_obj else 93):
                return -1
            depth -= 1
            i += 1
            if depth == 0:
                return i


@_inline
def _colon_after_key(b, i, n):
    """A key at b[i] and its colon: the index of the value after them (-1: not `"key" :`)."""
    if i >= n or b[np.uint64(i)] != 34:
        return -1
    i = _any_string(b, i, n)
    if i < 0:
        return -1
    i = _ws(b, i, n)
    if i >= n or b[np.uint64(i)] != 58:
        return -1
    return _ws(b, i + 1, n)


@_inline
def _plain_key(b, i, n):
    """Past the closing quote of a string whose text starts at b[i], where it holds no escape and no control byte
    (-1: it holds one, or does not close). Every key is read so, and a value string (a name, a category, the phase)
    first so: most of a trace's strings hold no escape, and _string reads the few that do. (Its eight-byte skip is
    _string's too: one inline helper for both made the kernel 1.125x as slow, RESULTS.md round 17.)"""
    while i < n:
        if i + 8 <= n:
            k = _stop8(_load8(b, i))
            i += k
            if k == 8:
                continue
        c = b[np.uint64(i)]
        if c == 34:
            return i + 1
        if c == 92 or c < 32:
            return -1
        i += 1
    return -1


@_inline
def _any_string(b, i, n):
    """b[i] is '"': past the string's closing quote (-1: not a valid string), read inline where it holds no escape."""
    end = _plain_key(b, i + 1, n)
    if end < 0:
        end, _ = _string(b, i, n)
    return end


@_inline
def _member(b, i, n, first, count):
    """At an object's member: (the index of its value (-1: not `"key":`, -3: a key with an escape), which of the
    known keys first..first+count it is (-1: none))."""
    if b[np.uint64(i)] != 34:
        return -1, -1
    ks = i + 1
    i = _plain_key(b, ks, n)
    if i < 0:  # an escape, a control byte, or no closing quote: read as _string reads it, to say which
        i, _ = _string(b, ks - 1, n)
        return (-1 if i < 0 else -3), -1
    key = _key(b, ks, i - 1, first, count)
    i = _ws(b, i, n)
    if i >= n or b[np.uint64(i)] != 58:
        return -1, -1
    i = _ws(b, i + 1, n)
    return (i if i < n else -1), key


@_inline
def _next(b, i, n, close):
    """After a member's value: (the next member's index, False) past a ',', or (past the closing byte, True); -1
    when neither follows."""
    i = _ws(b, i, n)
    if i >= n:
        return -1, False
    if b[np.uint64(i)] == close:
        return i + 1, True
    if b[np.uint64(i)] != 44:
        return -1, False
    i = _ws(b, i + 1, n)
    return (i if i < n else -1), False


@_inline
def _fnv(b, s, e):
    """A 64-bit hash of b[s:e], eight bytes a step (FNV's constants; the shift folds each step's high bits down,
    where the table's slot is read). An empty span hashes to _FNV_BASIS, the cleared rows' value."""
    h = _FNV_BASIS
    k = s
    while k + 8 <= e:
        h = (h ^ _load8(b, k)) * _FNV_PRIME
        h ^= h >> np.uint64(29)
        k += 8
    if k < e:
        t = np.uint64(e - k)  # the tail's bytes, with its length, so "a" and "a\0" differ
        while k < e:
            t = (t << np.uint64(8)) | np.uint64(b[np.uint64(k)])
            k += 1
        h = (h ^ t) * _FNV_PRIME
        h ^= h >> np.uint64(29)
    return h


@_inline
def _key(b, s, e, first, count):
    """Which of the known keys first..first+count the raw key b[s:e] is (-1: none)."""
    length = e - s
    if length >= 32 or length == 0:
        return -1
    k = _KEY_AT[length, b[np.uint64(s)]]
    while k >= 0:
        if first <= k < first + count:
            same = True
            for j in range(1, length):
                if b[np.uint64(s + j)] != _KEY_BYTES[k, j]:
                    same = False
                    break
            if same:
                return k
        k = _KEY_NEXT[k]
    return -1


@_jit
def _int_field(b, i, n, ints, row, col, allow_null, stack):
    """An int arg into ints[row, col]: (end, status) with status 0 ok, 1 a type the typed decode rejects,
    2 a number not read exactly (past 18 digits)."""
    c = b[np.uint64(i)]
    if c == 45 or 48 <= c <= 57:
        end, kind, iv, _, exact = _num(b, i, n)
        if end < 0:
            return -1, 1
        if kind != N_INT:
            return end, 1
        if not exact:
            return end, 2
        ints[row, col] = iv
        return end, 0
    end = _value(b, i, n, stack)
    if allow_null and c == 110:
        ints[row, col] = -1
        return end, 0
    return end, 1


@_jit
def _args(b, i, n, ints, row, bad, stack):
    """The args object at b[i]: the link and memory fields into the row; bad[k] set for a field whose value the
    typed decode would read differently (checked against the event's phase later). Returns the end (<0: fail)."""
    i = _ws(b, i + 1, n)
    if i >= n:
        return -1
    if b[np.uint64(i)] == 125:
        return i + 1
    seen = 0
    while True:
        i, key = _member(b, i, n, _EVENT_KEYS, _ARG_KEYS)
        if i < 0:
            return i
        if key >= 0:
            bit = 1 << key
            if seen & bit:
                return -3
            seen |= bit
        k = key - _EVENT_KEYS
        if k < 0:
            i = _value(b, i, n, stack)
        elif k <= 4:  # External id, external id, correlation, Python id, Python parent id
            i, status = _int_field(b, i, n, ints, row, EXT + k, k == 4, stack)
            if status:
                bad[key] = status
        elif k <= 6:  # Input Dims, Input dims: kept as written
            start = i
            i = _value(b, i, n, stack)
            if i >= 0:
                col = DIMS if k == 5 else DIMS_OLD
                ints[row, col] = start
                ints[row, col + 1] = i - start
        elif k == 7:  # bytes: a size, or -1 for what is not one
            c = b[np.uint64(i)]
            if c == 45 or 48 <= c <= 57:
                end, kind, iv, _, exact = _num(b, i, n)
                i = end
                if kind != N_INT or not exact:
                    bad[key] = 2
                else:
                    ints[row, NBYTES] = iv if iv >= 0 else -1
            else:
                i = _value(b, i, n, stack)
        else:  # the allocator's fields
            i, status = _int_field(b, i, n, ints, row, MEM + k - 8, False, stack)
            if status:
                bad[key] = status
        if i < 0:
            return i
        i, closed = _next(b, i, n, 125)
        if i < 0 or closed:
            return i


@_inline
def _str_field(b, i, n, ints, hashes, row, col, hcol, stack):
    """A string field: (end, ok)."""
    if b[np.uint64(i)] != 34:
        return _value(b, i, n, stack), False
    end = _plain_key(b, i + 1, n)  # most strings hold no escape: read inline
    esc = False
    if end < 0:
        end, esc = _string(b, i, n)
    if end < 0:
        return -1, False
    ints[row, col] = i + 1
    ints[row, col + 1] = end - 1 - (i + 1)
    ints[row, col + 2] = esc
    hashes[row, hcol] = _fnv(b, i + 1, end - 1)
    return end, True


@_inline
def _id_field(b, i, n, ints, hashes, row, col, hcol, stack):
    """A pid or tid (int or string): (end, ok)."""
    c = b[np.uint64(i)]
    if c == 34:
        end, ok = _str_field(b, i, n, ints, hashes, row, col, hcol, stack)
        ints[row, col + 3] = 1
        return end, ok
    if c == 45 or 48 <= c <= 57:
        end, kind, iv, _, exact = _num(b, i, n)
        if end < 0:
            return -1, False
        ints[row, col] = iv
        ints[row, col + 3] = 0
        return end, kind == N_INT and exact
    return _value(b, i, n, stack), False


@_jit
def _event(b, i, n, ints, floats, hashes, row, bad, stack):
    """One event object at b[i] into its row: (end, reason) with reason 0 when it was read."""
    ints[row, EV_START] = i
    i = _ws(b, i + 1, n)
    if i >= n:
        return -1, BAD_JSON
    bad[:] = 0  # per known key: 1 a type the typed decode rejects, 2 inexact
    seen = 0
    phase = -1
    if b[np.uint64(i)] == 125:
        return -1, PHASE_UNREAD  # {}: no phase
    while True:
        i, key = _member(b, i, n, 0, _EVENT_KEYS)
        if i < 0:
            return -1, BAD_KEY if i == -3 else BAD_JSON
        if key >= 0:
            bit = 1 << key
            if seen & bit:
                return -1, BAD_KEY
            seen |= bit
        ok = True
        if key == 0:  # ph: one letter
            if b[np.uint64(i)] != 34:
                return -1, PHASE_UNREAD
            end = _plain_key(b, i + 1, n)
            if end != i + 3:
                return -1, PHASE_UNREAD
            phase = _PHASE_OF[b[np.uint64(i + 1)]]
            if phase < 0:
                return -1, PHASE_UNREAD
            ints[row, PHASE] = b[np.uint64(i + 1)]
            i = end
        elif key == 1:
            i, ok = _str_field(b, i, n, ints, hashes, row, NAME, H_NAME, stack)
        elif key == 2:
            i, ok = _str_field(b, i, n, ints, hashes, row, CAT, H_CAT, stack)
        elif key == 3:
            i, ok = _id_field(b, i, n, ints, hashes, row, PID, H_PID, stack)
        elif key == 4:
            i, ok = _id_field(b, i, n, ints, hashes, row, TID, H_TID, stack)
        elif key == 5 or key == 6:  # ts, dur
            c = b[np.uint64(i)]
            if c == 45 or 48 <= c <= 57:
                end, _, _, fv, exact = _num(b, i, n)
                i = end
                if not exact:
                    bad[key] = 2
                floats[row, F_TS if key == 5 else F_DUR] = fv
            else:
                i = _value(b, i, n, stack)
                ok = False
        elif key == 7:  # args
            if b[np.uint64(i)] == 123:
                i = _args(b, i, n, ints, row, bad, stack)
                if i == -3:
                    return -1, BAD_KEY
            else:
                i = _value(b, i, n, stack)
                ok = False
        elif key == 8:  # id
            c = b[np.uint64(i)]
            if c == 45 or 48 <= c <= 57:
                end, kind, iv, _, exact = _num(b, i, n)
                i = end
                ok = kind == N_INT and exact
                ints[row, FLOW_ID] = iv
            elif c == 110:
                i = _value(b, i, n, stack)
            else:
                i = _value(b, i, n, stack)
                ok = False
        else:
            i = _value(b, i, n, stack)
        if i == -2:
            return -1, TOO_DEEP
        if i < 0:
            return -1, BAD_JSON
        if not ok and key >= 0:
            bad[key] = 1
        i, closed = _next(b, i, n, 125)
        if i < 0:
            return -1, BAD_JSON
        if closed:
            break
    ints[row, EV_END] = i
    if phase < 0:
        return -1, PHASE_UNREAD
    ints[row, CODE] = phase
    return i, _judge(phase, bad)


@_jit
def _judge(phase, bad):
    """Whether the fields this phase's Struct reads (_READ) were all of the types it takes: 0, or why not."""
    worst = 0
    for k in range(_KEYS):
        if _READ[phase, k] and bad[k] > worst:
            worst = bad[k]
    if worst == 2:
        return INEXACT
    if worst == 1:
        return BAD_TYPE
    return 0


@_jit
def scan(b, ints, floats, hashes):
    """Scan a chunk ('[' events ']') into the rows: (events read, reason 0) or (-1, why not)."""
    n = len(b)
    room = ints.shape[0]
    bad = np.zeros(_KEYS, np.int8)
    stack = np.empty(MAX_DEPTH, np.uint8)
    i = _ws(b, 0, n)
    if i >= n or b[np.uint64(i)] != 91:
        return -1, BAD_JSON
    i = _ws(b, i + 1, n)
    row = 0
    if i < n and b[np.uint64(i)] == 93:
        i += 1
    else:
        while True:
            if i >= n:
                return -1, BAD_JSON
            if b[np.uint64(i)] != 123:
                return -1, NOT_OBJECT
            if row >= room:
                return -1, NO_ROOM
            _clear(ints, floats, hashes, row)
            i, why = _event(b, i, n, ints, floats, hashes, row, bad, stack)
            if why:
                return -1, why
            row += 1
            i, closed = _next(b, i, n, 93)
            if i < 0:
                return -1, BAD_JSON
            if closed:
                break
    if _ws(b, i, n) != n:
        return -1, BAD_JSON
    return row, 0


@_jit
def _clear(ints, floats, hashes, row):
    """A row's defaults, as schema.py's: absent ids -1, absent strings empty, Bytes 0, ts NaN, dur 0."""
    for c in range(INTS):
        ints[row, c] = -1
    for col in (NAME, CAT, PID, TID):
        ints[row, col] = 0
        ints[row, col + 1] = 0
        ints[row, col + 2] = 0
    ints[row, PID_KIND] = 1  # absent reads as "" (schema.py's default)
    ints[row, TID_KIND] = 1
    ints[row, DIMS + 1] = -1
    ints[row, DIMS_OLD + 1] = -1
    ints[row, MEM] = 0
    floats[row, F_TS] = np.nan
    floats[row, F_DUR] = 0.0
    for c in range(hashes.shape[1]):
        hashes[row, c] = _FNV_BASIS


@_jit
def _same(b, s, length, f, f_length):
    """Whether the spans b[s:s+length] and b[f:f+f_length] hold the same bytes, eight at a time where the chunk
    holds eight more past both."""
    if length != f_length:
        return False
    j = 0
    last = len(b) - 8
    while j < length and s + j <= last and f + j <= last:
        diff: Any = _load8(b, s + j) ^ _load8(b, f + j)
        if length - j < 8:  # only the span's own bytes count
            diff &= (np.uint64(1) << np.uint64(8 * (length - j))) - np.uint64(1)
        if diff:
            return False
        j += 8
    for k in range(j, length):
        if b[np.uint64(s + k)] != b[np.uint64(f + k)]:
            return False
    return True


@_jit
def _grouped(b, keys, starts, lengths, rows, pairs):
    """Events grouped by equal key and equal value, in order of first appearance: (the first event of each group,
    each event's group). The value is a span (starts, lengths) or, with pairs, a (pid, tid) row as written."""
    m = len(keys)
    size = 16
    while size < 2 * m:
        size <<= 1
    mask = size - 1
    table = np.full(size, -1, np.int64)  # open addressing: slot -> group
    firsts = np.empty(m, np.int64)
    inverse = np.empty(m, np.int64)
    groups = 0
    for k in range(m):
        h = keys[k]
        slot = np.int64(h & np.uint64(mask))
        while True:
            g = table[slot]
            if g < 0:
                table[slot] = groups
                firsts[groups] = k
                inverse[k] = groups
                groups += 1
                break
            f = firsts[g]
            if keys[f] == h:
                if pairs:
                    same = _same_id(b, rows, k, f, PID) and _same_id(b, rows, k, f, TID)
                else:
                    same = _same(b, starts[k], lengths[k], starts[f], lengths[f])
                if same:
                    inverse[k] = g
                    break
            slot = (slot + 1) & mask
    return firsts[:groups], inverse


@_jit
def first_seen(b, keys, starts, lengths):
    """Equal spans grouped in order of first appearance, by hash and then byte for byte (spans that share a hash
    are told apart): (the first event of each group, each event's group)."""
    return _grouped(b, keys, starts, lengths, np.empty((0, INTS), np.int64), False)


@_jit
def _same_id(b, rows, k, f, col):
    """Whether events k and f have the same pid (col PID) or tid (col TID) as written: an int, or a string."""
    if rows[k, col + 3] != rows[f, col + 3]:
        return False
    if rows[k, col + 3] == 0:
        return rows[k, col] == rows[f, col]
    return _same(b, rows[k, col], rows[k, col + 1], rows[f, col], rows[f, col + 1])


@_jit
def first_seen_tracks(b, rows, hashes):
    """The events' (pid, tid) pairs as written, grouped in order of first appearance (as first_seen)."""
    m = rows.shape[0]
    keys = np.empty(m, np.uint64)
    for k in range(m):
        p = hashes[k, H_PID] if rows[k, PID_KIND] else np.uint64(rows[k, PID])
        t = hashes[k, H_TID] if rows[k, TID_KIND] else np.uint64(rows[k, TID])
        keys[k] = (p * _FNV_PRIME) ^ (t + np.uint64(rows[k, PID_KIND] * 2 + rows[k, TID_KIND]))
    none = np.empty(0, np.int64)
    return _grouped(b, keys, none, none, rows, True)


@_jit
def has_high_bytes(b):
    """Whether any byte is past ASCII (then the chunk must be checked as UTF-8), eight bytes at a time."""
    n8 = len(b) // 8
    words = b[: n8 * 8].view(np.uint64)
    acc = np.uint64(0)
    for k in range(n8):
        acc |= words[k]
    for k in range(n8 * 8, len(b)):
        acc |= np.uint64(b[np.uint64(k)])
    return (acc & np.uint64(0x8080808080808080)) != 0


@_jit
def span_hashes(b, starts, lengths):
    """The hash of each span (the input dims, hashed only where an event has them)."""
    out = np.empty(len(starts), np.uint64)
    for k in range(len(starts)):
        out[k] = _fnv(b, starts[k], starts[k] + lengths[k])
    return out
