"""FLOPs and bytes of one op call from its recorded shapes, one small function per op family (TraceLens's conventions).

Each model takes the op's Input Dims, Input type and Concrete Inputs (record_shapes) and returns its Work:
FLOPs, bytes moved to and from memory (each operand read once, the output written once, at the dtypes'
sizes), the compute precision and the unit (matrix: tensor / matrix cores; vector: CUDA cores, SIMD).
The formulas follow TraceLens (AMD-AGI/TraceLens, TraceLens/PerfModel/perf_model.py) so that both tools'
figures can be compared; where we differ it is said at the function. Anything a model cannot read raises
Unmodelled, and the op is counted as not modelled, never guessed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# dtype name in a trace -> (bytes per element, precision of the roof); TraceLens's name2bpe, extended.
DTYPES: dict[str, tuple[int, str]] = {
    "double": (8, "fp64"),
    "float": (4, "fp32"),
    "c10::half": (2, "fp16"),
    "c10::bfloat16": (2, "bf16"),
    "c10::float8_e4m3fn": (1, "fp8"),
    "c10::float8_e4m3fnuz": (1, "fp8"),
    "c10::float8_e5m2": (1, "fp8"),
    "c10::float8_e5m2fnuz": (1, "fp8"),
    "c10::float8_e8m0fnu": (1, "fp8"),
    "c10::float4_e2m1fn_x2": (1, "fp4"),
    "long int": (8, "int64"),
    "int": (4, "int32"),
    "short int": (2, "int16"),
    "signed char": (1, "int8"),
    "unsigned char": (1, "uint8"),
    "bool": (1, "bool"),
    "scalar": (4, "fp32"),  # a Python number argument: TraceLens counts 4 bytes
}


class Unmodelled(ValueError):
    """The op's shapes, dtypes or arguments cannot be read by its model."""


@dataclass(frozen=True)
class OpArgs:
    """What record_shapes wrote for one call."""

    dims: list
    types: list
    concrete: list = field(default_factory=list)


@dataclass(frozen=True)
class Work:
    """One call's work: FLOPs, bytes, the roof's precision and unit; for GEMMs their (B, M, N, K)."""

    flops: float
    bytes: float
    dtype: str
    unit: str
    family: str
    bmnk: tuple[int, int, int, int] | None = None


def bpe(name: Any) -> int:
    """Bytes per element of a dtype name (Unmodelled for one we do not know)."""
    try:
        return DTYPES[str(name).lower()][0]
    except KeyError:
        raise Unmodelled(f"unknown dtype {name!r}") from None


def precision(name: Any) -> str:
    bpe(name)
    return DTYPES[str(name).lower()][1]


def _shape(a: OpArgs, k: int) -> tuple[int, ...]:
    try:
        dims = a.dims[k]
    except IndexError:
        raise Unmodelled(f"no input {k}") from None
    if not isinstance(dims, list) or not all(isinstance(d, int) and d >= 0 for d in dims):
        raise Unmodelled(f"input {k} has no shape")
    return tuple(dims)


def _type(a: OpArgs, k: int) -> str:
    return str(a.types[k]) if k < len(a.types) else ""


def _concrete(a: OpArgs, k: int) -> str:
    return str(a.concrete[k]).strip() if k < len(a.concrete) else ""


def _present(a: OpArgs, k: int) -> bool:
    return k < len(a.dims) and isinstance(a.dims[k], list) and bool(a.dims[k]) and _type(a, k) not in ("", "Scalar")


# ---- GEMM -----------------------------------------------------------------------------------------


def gemm_work(b: int, m: int, n: int, k: int, bias: bool, sizes: tuple[int, int, int, int], dtype: str) -> Work:
    """FLOPs = B·(2·M·N·K + M·N with a bias); bytes = B·(M·K·a + K·N·b + M·N·out + N·bias).

    TraceLens's GEMM.flops_func and bytes_func: the bias is counted as 1×N per matrix, whatever its shape.
    """
    sa, sb, sbias, sout = sizes
    flops = b * (2 * m * n * k + (m * n if bias else 0))
    moved = b * (m * k * sa + k * n * sb + m * n * sout + (n * sbias if bias else 0))
    return Work(flops, moved, precision(dtype), "matrix", "gemm", (b, m, n, k))


def mm(a: OpArgs) -> Work:
    """aten::mm(A[M,K], B[K,N]): every tensor at A's dtype size (TraceLens: the output dtype is not recorded)."""
    (m, k), (_, n) = _mat(a, 0), _mat(a, 1)
    s = bpe(_type(a, 0))
    return gemm_work(1, m, n, k, False, (s, s, s, s), _type(a, 0))


def addmm(a: OpArgs) -> Work:
    """aten::addmm(C, A[M,K], B[K,N]): mm plus the bias C (M·N FLOPs, N elements read)."""
    (m, k), (_, n) = _mat(a, 1), _mat(a, 2)
    s = bpe(_type(a, 1))
    return gemm_work(1, m, n, k, True, (s, s, s, s), _type(a, 1))


def bmm(a: OpArgs) -> Work:
    """aten::bmm(A[B,M,K], B[B,K,N]): B matrix products."""
    (b, m, k), (_, _, n) = _batched(a, 0), _batched(a, 1)
    s = bpe(_type(a, 0))
    return gemm_work(b, m, n, k, False, (s, s, s, s), _type(a, 0))


def baddbmm(a: OpArgs) -> Work:
    """aten::baddbmm(C, A[B,M,K], B[B,K,N]): bmm plus a bias per matrix."""
    (b, m, k), (_, _, n) = _batched(a, 1), _batched(a, 2)
    s = bpe(_type(a, 1))
    return gemm_work(b, m, n, k, True, (s, s, s, s), _type(a, 1))


def scaled_mm(a: OpArgs) -> Work:
    """aten::_scaled_mm(A, B, scale_a, scale_b, bias?, ...): an fp8 output is taken as 2 bytes (TraceLens)."""
    (m, k), (_, n) = _mat(a, 0), _mat(a, 1)
    sa, sb = bpe(_type(a, 0)), bpe(_type(a, 1))
    bias = _present(a, 4)
    out = 2 if sa == 1 else sa
    return gemm_work(1, m, n, k, bias, (sa, sb, bpe(_type(a, 4)) if bias else sa, out), _type(a, 0))


def linear(a: OpArgs) -> Work:
    """aten::linear(X[..., K], W[N, K], bias[N]?): M = every leading dim of X (used when no mm/addmm runs below)."""
    x, w = _shape(a, 0), _mat(a, 1)
    if not x:
        raise Unmodelled("a 0-d input")
    m, (n, k) = math.prod(x[:-1]), w
    if x[-1] != k:
        raise Unmodelled("input and weight do not agree")
    s = bpe(_type(a, 0))
    return gemm_work(1, m, n, k, _present(a, 2), (s, s, s, s), _type(a, 0))


def matmul(a: OpArgs) -> Work:
    """aten::matmul: 1-d operands as a row / column; leading dims broadcast into the batch B."""
    x, y = _shape(a, 0), _shape(a, 1)
    if not x or not y:
        raise Unmodelled("a 0-d operand")
    x2 = (1, *x) if len(x) == 1 else x
    y2 = (*y, 1) if len(y) == 1 else y
    if x2[-1] != y2[-2]:
        raise Unmodelled("inner dimensions do not agree")
    if len(y2) == 2:  # (..., M, K) @ (K, N): one GEMM with the leading dims folded into M
        b, m = 1, math.prod(x2[:-1])
    else:
        b, m = math.prod(_broadcast(x2[:-2], y2[:-2])), x2[-2]
    s = bpe(_type(a, 0))
    return gemm_work(b, m, y2[-1], x2[-1], False, (s, s, s, s), _type(a, 0))


def _mat(a: OpArgs, k: int) -> tuple[int, int]:
    s = _shape(a, k)
    if len(s) != 2:
        raise Unmodelled(f"input {k} is not a matrix")
    return s[0], s[1]


def _batched(a: OpArgs, k: int) -> tuple[int, int, int]:
    s = _shape(a, k)
    if len(s) != 3:
        raise Unmodelled(f"input {k} is not a batch of matrices")
    return s[0], s[1], s[2]


def _broadcast(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y
    if any(p != q and 1 not in (p, q) for p, q in zip(x, y, strict=True)):
        raise Unmodelled("shapes do not broadcast")
    return tuple(max(p, q) for p, q in zip(x, y, strict=True))


# ---- attention ------------------------------------------------------------------------------------


def attention_work(q: tuple[int, ...], k: tuple[int, ...], v: tuple[int, ...], causal: bool, dtype: str) -> Work:
    """Q[B,H_Q,N_Q,d], K/V[B,H_KV,N_KV,d]: FLOPs = 4·B·H_Q·N_Q·N_KV·d (QKᵀ and PV), halved when causal.

    Bytes = Q, K and V read and O written once (TraceLens's SDPA.bytes_func; TraceLens always takes 2 bytes
    per element, we take the dtype's size, the same for bf16 and fp16). The softmax is not counted.
    """
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise Unmodelled("attention inputs are not 4-d")
    (b, hq, nq, dq), (_, hk, nk, dk), (_, _, _, dv) = q, k, v
    if dq != dk or k[2] != v[2]:
        raise Unmodelled("Q, K and V do not agree")
    flops = float(b * hq * 2 * nq * nk * dq + b * hq * 2 * nq * dv * nk)
    if causal:
        if nq != nk:
            raise Unmodelled("causal with N_Q != N_KV")
        flops /= 2
    elems = b * nq * hq * dq + b * nk * hk * dk + b * nk * hk * dv + b * nq * hq * dv
    return Work(flops, elems * bpe(dtype), precision(dtype), "matrix", "attention")


def sdpa_flash(a: OpArgs) -> Work:
    """aten::_scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, ...)."""
    _needs_concrete(a)
    return attention_work(_shape(a, 0), _shape(a, 1), _shape(a, 2), _true(a, 4), _type(a, 0))


def sdpa_efficient(a: OpArgs) -> Work:
    """aten::_scaled_dot_product_efficient_attention / _cudnn_attention(q, k, v, bias, lse, dropout_p, is_causal)."""
    _needs_concrete(a)
    return attention_work(_shape(a, 0), _shape(a, 1), _shape(a, 2), _true(a, 6), _type(a, 0))


def efficient_attention_forward(a: OpArgs) -> Work:
    """aten::_efficient_attention_forward(q, k, v, ...) in [B, N, H, d] layout; custom_mask_type (9) 1 or 2 is causal."""
    _needs_concrete(a)
    q, k, v = (_bnhd(_shape(a, i)) for i in range(3))
    mask = _concrete(a, 9)
    return attention_work(q, k, v, mask in ("1", "2"), _type(a, 0))


def _bnhd(s: tuple[int, ...]) -> tuple[int, ...]:
    return (s[0], s[2], s[1], s[3]) if len(s) == 4 else s


def _true(a: OpArgs, k: int) -> bool:
    return _concrete(a, k).lower() == "true"


def _needs_concrete(a: OpArgs) -> None:
    """Models that read a flag or a size from Concrete Inputs (absent before 2022): never guess them."""
    if not a.concrete:
        raise Unmodelled("no Concrete Inputs in this trace")


# ---- convolution ----------------------------------------------------------------------------------


def convolution(a: OpArgs) -> Work:
    """aten::convolution(x, w, bias?, stride, padding, dilation, transposed, output_padding, groups).

    TraceLens's CONV (after torch.utils.flop_counter): FLOPs = 2·prod(w[1:]) per output element
    (per input element when transposed) + one per output element for a bias; bytes = x, w, the bias
    (C_out) and the output, all at the input's dtype size.
    """
    _needs_concrete(a)
    x, w = _shape(a, 0), _shape(a, 1)
    nd = len(x) - 2
    if nd < 1 or len(w) != len(x):
        raise Unmodelled("not a 1-3d convolution")
    stride, pad, dil = (_ints(_concrete(a, i), nd, d) for i, d in ((3, 1), (4, 0), (5, 1)))
    transposed = _true(a, 6)
    out_pad = _ints(_concrete(a, 7), nd, 0)
    out = _conv_out(x, w, stride, pad, dil, transposed, out_pad)
    bias = _present(a, 2)
    per = 2 * math.prod(w[1:])
    flops = (math.prod(x) if transposed else math.prod(out)) * per + (math.prod(out) if bias else 0)
    elems = math.prod(x) + math.prod(w) + (out[1] if bias else 0) + math.prod(out)
    return Work(flops, elems * bpe(_type(a, 0)), precision(_type(a, 0)), "matrix", "conv")


def _conv_out(x, w, stride, pad, dil, transposed: bool, out_pad) -> tuple[int, ...]:
    spatial = []
    for i in range(len(x) - 2):
        n, kk = x[i + 2], w[i + 2]
        if transposed:
            spatial.append((n - 1) * stride[i] - 2 * pad[i] + dil[i] * (kk - 1) + out_pad[i] + 1)
        else:
            spatial.append((n + 2 * pad[i] - dil[i] * (kk - 1) - 1) // stride[i] + 1)
    if any(s <= 0 for s in spatial):
        raise Unmodelled("an empty output")
    return (x[0], w[1] if transposed else w[0], *spatial)


def _ints(text: str, n: int, default: int) -> tuple[int, ...]:
    if text in ("", "None"):
        return (default,) * n
    try:
        values = [int(v) for v in re.findall(r"-?\d+", text)]
    except ValueError:
        raise Unmodelled(f"cannot read {text!r}") from None
    if len(values) == 1:
        return (values[0],) * n
    if len(values) != n:
        raise Unmodelled(f"{text!r} is not {n} values")
    return tuple(values)


# ---- elementwise, reductions, softmax, norms --------------------------------------------------------


def unary(a: OpArgs) -> Work:
    """One input (copy_: self and src): FLOPs = elements; bytes = elements·(in + out) (TraceLens's UnaryElementwise).

    The output is the second tensor argument when one is given (copy_'s src, an out=), else the input's dtype.
    """
    n = math.prod(_shape(a, 0))
    out = _type(a, 1) if _present(a, 1) else _type(a, 0)
    return Work(n, n * (bpe(_type(a, 0)) + bpe(out)), precision(_type(a, 0)), "vector", "elementwise")


def binary(a: OpArgs) -> Work:
    """Two inputs, broadcast: FLOPs = output elements; bytes = in1 + in2 + out (TraceLens's BinaryElementwise).

    A Scalar operand counts as one 4-byte element; the output takes the larger of two tensors' sizes.
    """
    s1, s2 = _shape(a, 0), _shape(a, 1) if _present(a, 1) or _type(a, 1) == "Scalar" else ()
    out_n = math.prod(_broadcast(s1, s2))
    b1, b2 = bpe(_type(a, 0)), bpe(_type(a, 1) or "Scalar")
    out = bpe(_type(a, 2)) if _present(a, 2) else (max(b1, b2) if s1 and s2 else b1)
    moved = math.prod(s1) * b1 + math.prod(s2) * b2 + out_n * out
    return Work(out_n, moved, precision(_type(a, 0)), "vector", "elementwise")


def reduction(a: OpArgs) -> Work:
    """sum, mean, amax, ...: FLOPs = input elements; bytes = input + output (TraceLens's Reduce).

    The output size comes from the dim and keepdim arguments (TraceLens, reading them as non-strings, takes 1).
    """
    _needs_concrete(a)
    x = _shape(a, 0)
    n = math.prod(x)
    dims = _reduced_dims(a, len(x))
    out = n if dims is None else math.prod(s for i, s in enumerate(x) if i not in dims)
    size = bpe(_type(a, 0))
    return Work(n, n * size + out * size, precision(_type(a, 0)), "vector", "reduce")


def _reduced_dims(a: OpArgs, ndim: int) -> set[int] | None:
    """The dims a reduction folds (None: a scan such as cumsum keeps every element)."""
    text = _concrete(a, 1)
    if not re.fullmatch(r"\[?\s*-?\d+(\s*,\s*-?\d+)*\s*\]?", text):
        return set(range(ndim))
    return {int(d) % max(ndim, 1) for d in re.findall(r"-?\d+", text)}


def scan(a: OpArgs) -> Work:
    """cumsum / cumprod: a reduction whose output has every input element."""
    x = _shape(a, 0)
    n, size = math.prod(x), bpe(_type(a, 0))
    return Work(n, 2 * n * size, precision(_type(a, 0)), "vector", "reduce")


def softmax(a: OpArgs) -> Work:
    """aten::_softmax(x, dim, half_to_float): 3 FLOPs per element (exp, sum, divide); bytes = x read and written."""
    _needs_concrete(a)
    n = math.prod(_shape(a, 0))
    size = bpe(_type(a, 0))
    out = 4 if _true(a, 2) else size
    return Work(3 * n, n * (size + out), precision(_type(a, 0)), "vector", "softmax")


def norm_work(elems: int, channels: int, affine: bool, bias: bool, training: bool, dtype: str) -> Work:
    """TraceLens's Normalization: FLOPs = 6·C + 3·E when training + 2·E; bytes = E·(in + out) + C·w·tensors.

    The C-sized tensors: mean and variance, the weight when affine, the bias, two more when training.
    """
    flops = channels * 3 + (elems * 3 if training else 0) + channels * 3 + 2 * elems
    tensors = 2 + (1 if affine else 0) + (1 if affine and bias else 0) + (2 if training else 0)
    size = bpe(dtype)
    return Work(flops, 2 * elems * size + tensors * channels * size, precision(dtype), "vector", "norm")


def layer_norm(a: OpArgs) -> Work:
    """aten::native_layer_norm(x, normalized_shape, weight?, bias?, eps): C = prod(normalized_shape); training, as TraceLens."""
    _needs_concrete(a)
    x = _shape(a, 0)
    channels = math.prod(_normalized(a))
    return norm_work(math.prod(x), channels, _present(a, 2), _present(a, 3), True, _type(a, 0))


def _normalized(a: OpArgs) -> list[int]:
    """normalized_shape from Concrete Inputs (e.g. '[512]')."""
    norm = [int(v) for v in re.findall(r"\d+", _concrete(a, 1))]
    if not norm or not all(norm):
        raise Unmodelled("no normalized_shape")
    return norm


def batch_norm(a: OpArgs) -> Work:
    """aten::native_batch_norm / cudnn_batch_norm(x, weight, bias, mean, var, training, ...): C = x's dim 1."""
    _needs_concrete(a)
    x = _shape(a, 0)
    if len(x) < 2:
        raise Unmodelled("batch norm of a tensor without channels")
    return norm_work(math.prod(x), x[1], _present(a, 1), True, _true(a, 5), _type(a, 0))


def group_norm(a: OpArgs) -> Work:
    """aten::native_group_norm(x, weight?, bias?, N, C, HxW, group, eps): C = x's dim 1, training, as TraceLens."""
    x = _shape(a, 0)
    if len(x) < 2:
        raise Unmodelled("group norm of a tensor without channels")
    return norm_work(math.prod(x), x[1], _present(a, 1), True, True, _type(a, 0))


def rms_norm(a: OpArgs) -> Work:
    """aten::_fused_rms_norm(x, normalized_shape, weight?, eps): TraceLens's RMSNorm.

    FLOPs = (E/C)·(2·C + 2) for the root mean squares, plus E (2·E with a weight); bytes = x read,
    the output written, the weight (C) read.
    """
    _needs_concrete(a)
    x = _shape(a, 0)
    elems, channels = math.prod(x), math.prod(_normalized(a))
    affine = _present(a, 2)
    flops = elems / channels * (2 * channels + 2) + elems * (2 if affine else 1)
    size = bpe(_type(a, 0))
    return Work(flops, 2 * elems * size + (channels * size if affine else 0), precision(_type(a, 0)), "vector", "norm")


UNARY = (
    "copy_ copy clamp_min clamp_min_ clamp_max clamp_max_ clamp clamp_ sigmoid sigmoid_ rsqrt silu silu_ neg pow "
    "relu relu_ gelu gelu_ tanh tanh_ exp exp_ log sqrt abs reciprocal sin cos erf hardtanh hardswish "
    "leaky_relu elu softplus mish sign floor ceil round"
).split()
BINARY = (
    "add add_ sub sub_ mul mul_ div div_ sigmoid_backward threshold_backward gelu_backward silu_backward "
    "tanh_backward maximum minimum"
).split()
REDUCE = "sum mean max min amax amin norm linalg_vector_norm std var logsumexp".split()
MODELS: dict[str, Callable[[OpArgs], Work]] = {
    "aten::mm": mm,
    "aten::addmm": addmm,
    "aten::bmm": bmm,
    "aten::baddbmm": baddbmm,
    "aten::_scaled_mm": scaled_mm,
    "aten::linear": linear,
    "aten::matmul": matmul,
    "aten::_scaled_dot_product_flash_attention": sdpa_flash,
    "aten::_scaled_dot_product_efficient_attention": sdpa_efficient,
    "aten::_scaled_dot_product_cudnn_attention": sdpa_efficient,
    "aten::_efficient_attention_forward": efficient_attention_forward,
    "aten::convolution": convolution,
    "aten::_convolution": convolution,
    "aten::_softmax": softmax,
    "aten::native_layer_norm": layer_norm,
    "aten::native_batch_norm": batch_norm,
    "aten::cudnn_batch_norm": batch_norm,
    "aten::miopen_batch_norm": batch_norm,
    "aten::native_group_norm": group_norm,
    "aten::_fused_rms_norm": rms_norm,
    "aten::cumsum": scan,
    "aten::cumprod": scan,
    **{f"aten::{n}": unary for n in UNARY},
    **{f"aten::{n}": binary for n in BINARY},
    **{f"aten::{n}": reduction for n in REDUCE},
}
# Ops that wrap the op doing the work: modelled only when no modelled op runs beneath them.
WRAPPERS = frozenset({"aten::linear", "aten::matmul"})


def model(name: str, a: OpArgs) -> Work:
    """The Work of one call of op `name` (Unmodelled when it has no model or its args cannot be read)."""
    fn = MODELS.get(name)
    if fn is None:
        raise Unmodelled(f"no model for {name}")
    try:
        return fn(a)
    except (TypeError, IndexError, ZeroDivisionError, ValueError) as exc:
        if isinstance(exc, Unmodelled):
            raise
        raise Unmodelled(f"{name}: {exc}") from None
