"""Kernels picked by what they are rather than by name: the selector of a what-if such as kernel:role=gemm=2.

A selector is key=value terms joined by commas: role= (one role or several joined by |, as the kernels table names
them: GEMM, attention, elementwise, triton, ...), unit= (matrix: tensor / matrix cores; vector: CUDA cores / ALUs)
and dtype= (fp32, tf32, bf16, fp16, fp8, fp4, int8, fp64). Case, spaces and punctuation are forgiven, and a role
term may be the start of any word of a role's name (conv: convolution; triton: every Triton family; gather:
index / gather). It reads kernel_roles.classify, so a what-if picks exactly the kernels the table shows in a role.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .kernel_roles import DATA_MOVEMENT, MATRIX, ROLE_NAMES, VECTOR, KernelClass

KEYS = ("role", "unit", "dtype")
DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8", "fp64")
_DTYPE_ALIASES = {"float32": "fp32", "f32": "fp32", "float": "fp32", "float16": "fp16", "f16": "fp16", "half": "fp16"}
_DTYPE_ALIASES |= {"bfloat16": "bf16", "float64": "fp64", "double": "fp64", "i8": "int8"}
_UNITS = {MATRIX: ("matrix", "tensor", "mfma", "mma"), VECTOR: ("vector", "cuda", "simt", "ffma", "alu")}
UNIT_WORDS = {MATRIX: "tensor-core", VECTOR: "CUDA-core"}


class SelectorError(ValueError):
    """A selector that names no role, unit or dtype there is (its message lists the ones there are)."""


@dataclass(frozen=True)
class Selector:
    """Kernels by role (any of roles), unit and dtype; an empty field picks any."""

    roles: frozenset[str] = frozenset()
    terms: tuple[str, ...] = ()  # the role terms as written, for the sentence
    unit: str = ""
    dtype: str = ""

    def matches(self, k: KernelClass) -> bool:
        return (
            (not self.roles or k.role in self.roles)
            and (not self.unit or k.unit == self.unit)
            and (not self.dtype or k.dtype == self.dtype)
        )

    def describe(self) -> str:
        """ "GEMM kernels", "fp32 CUDA-core GEMM kernels", "copies and sets"."""
        shown = [_shown(t) for t in self.terms]
        roles = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else "".join(shown)
        if roles == DATA_MOVEMENT and not self.unit and not self.dtype:
            return "copies and sets"
        words = [self.dtype, UNIT_WORDS.get(self.unit, ""), roles]
        return " ".join(w for w in words if w) + " kernels"


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _words(role: str) -> list[str]:
    return [w for w in (_norm(p) for p in re.split(r"[^A-Za-z0-9-]+", role)) if w]


def role_matches(term: str, role: str) -> bool:
    """Does a role term (as written in a selector) pick this role: its whole name or a word of it, from the start?"""
    t = _norm(term)
    return bool(t) and (_norm(role).startswith(t) or any(w.startswith(t) for w in _words(role)))


def _shown(term: str) -> str:
    """A role term as the sentence says it: the role it names exactly, else as written."""
    return next((r for r in ROLE_NAMES if _norm(r) == _norm(term)), term.strip())


def parse(text: str) -> Selector | None:
    """The selector a kernel pattern is (None: it is a regular expression, not key=value terms)."""
    terms = [t.partition("=") for t in text.split(",")]
    if not terms or _norm(terms[0][0]) not in KEYS or not terms[0][1]:
        return None
    found: dict[str, str] = {}
    for key, eq, value in terms:
        k = _norm(key)
        if k not in KEYS or not eq or not value.strip():
            raise SelectorError(f"{key.strip()}={value.strip()}: say role=, unit= or dtype= with a value")
        found[k] = value
    return _selector(found)


def _selector(found: dict[str, str]) -> Selector:
    roles, terms = _roles(found.get("role", ""))
    return Selector(roles, terms, _unit(found.get("unit", "")), _dtype(found.get("dtype", "")))


def _roles(value: str) -> tuple[frozenset[str], tuple[str, ...]]:
    terms = tuple(t.strip() for t in value.split("|") if t.strip())
    picked = set()
    for t in terms:
        hit = [r for r in ROLE_NAMES if role_matches(t, r)]
        if not hit:
            raise SelectorError(f"no role {t!r}; the roles: {', '.join(ROLE_NAMES)}")
        picked |= set(hit)
    return frozenset(picked), terms


def _unit(value: str) -> str:
    v = _norm(value)
    if not v:
        return ""
    found = next((u for u, starts in _UNITS.items() if any(v.startswith(s) for s in starts)), "")
    if not found:
        raise SelectorError(
            f"no unit {value.strip()!r}: unit=matrix (tensor / matrix cores) or unit=vector (CUDA cores)"
        )
    return found


def _dtype(value: str) -> str:
    v = _norm(value)
    if not v:
        return ""
    v = _DTYPE_ALIASES.get(v, v)
    if v not in DTYPES:
        raise SelectorError(f"no dtype {value.strip()!r}; the dtypes: {', '.join(DTYPES)}")
    return v
