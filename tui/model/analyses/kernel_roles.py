"""What a GPU kernel does and where its math runs, read from its name: the one classifier every table and rule reads.

classify(name) gives a KernelClass: the kernel's role (GEMM, attention, collective, ...) and its math unit, the
tensor / matrix cores ("matrix") or the CUDA cores / vector ALUs ("vector"), with the dtype where the name says it.
The kernels table's Role and Runs-on columns, the explain rules, the roofline's choice of roof and the critical
path's classes all read it, so no two of them can disagree about a kernel.

Roles: rules run in order and the first match wins. Triton kernels come first: their names are chosen by whoever
wrote them (Inductor's triton_poi_/red_/per_/tem_ prefixes, or a hand-written kernel such as
create_flashinfer_kv_indices_triton), so a word like "flashinfer" or "attention" in them says nothing about the role.
Then collectives, whose names embed the op they move data for, then attention before GEMM (attention kernels are
built from GEMMs and often say so), then the rest. Words that only appear in a template argument or a library's
namespace are not roles: fbgemm_gpu's embedding kernels are no GEMMs, a cutlass::bfloat16_t argument makes no
kernel a GEMM, and a _typeConvert helper is no convolution.

Units: CUDA-core markers win over tensor-core ones (sm80_xmma_gemm_f32f32_..._ffma_... is an FFMA kernel inside
cuBLAS's xmma family): ffma, sgemm (not s16816/s1688gemm, which are tensor-core shapes), simt, scudnn, gemv, the
cuDNN fp32 engines. Tensor cores: hmma/imma, the mma shapes (s16816, s1688, h884, i8816...), tensorop, wmma,
wgmma/gmma, xmma, nvjet (cuBLASLt on Hopper and later), cuDNN's tensor16x8x8, FlashAttention/FMHA, TensorRT-LLM's
bmm_, Triton GEMM templates; AMD: Tensile's Cijk_ kernels with an MFMA instruction (_MI32x32x...) against those
without, composable_kernel's xdl/xdlops, MIOpen's gtcx.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

Role = str


def _re(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A regular expression compiled when first used: compiling this module's (about 4 ms) was paid by every command
    that imports it, a cached summary too, where none classifies a kernel."""
    return cache(lambda: re.compile(pattern, flags))


DATA_MOVEMENT = "data movement"  # a memcpy or memset: the kernels table's role for copies and sets
ROLES: list[tuple[Role, Callable[[], re.Pattern[str]]]] = [
    ("triton pointwise", _re(r"^triton_poi_")),
    ("triton reduction", _re(r"^triton_(red|per)_")),
    ("triton template (GEMM/conv)", _re(r"^triton_tem_")),
    ("triton", _re(r"^triton_|_triton(_|$)|^_?triton", re.I)),
    (
        "collective",
        _re(
            r"nccl|rccl|\bhccl|xccl|oneccl|msccl|c10d::|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv",
            re.I,
        ),
    ),
    (
        "attention",
        _re(
            r"flash_?(fwd|bwd|attn)|flashattn|fmha|mha_(fwd|bwd)|(^|_)attn_(fwd|bwd)|_attn_|attention_kernel|efficient_attention|"
            r"cudnn.*(sdpa|flash|attn|mha)|batch_?(prefill|decode)|single_?(prefill|decode)|paged_?attention|"
            r"unified_attention|flashinfer.*(prefill|decode|attention)|ck_tile::Fmha|sdpa",
            re.I,
        ),
    ),
    (
        "normalization",
        _re(
            r"layer_?norm|rms_?norm|batch_?norm|group_?norm|instance_?norm|bn_(fw|bw)|normalization|GammaBeta|"
            r"RowwiseMoments|ComputeFusedParams",
            re.I,
        ),
    ),
    (
        "convolution",
        _re(
            r"conv(?!ert)|implicit_?gemm|igemm_(fwd|bwd|wrw)|winograd|fprop|dgrad|wgrad|im2col|scudnn|cudnn::cnn|"
            r"cask_cudnn|h884cudnn|s884cudnn",
            re.I,
        ),
    ),
    (
        "GEMM",
        _re(
            r"(?<!fb)gemm|gemv|nvjet|xmma|Cijk_|hipblaslt|rocblas|wvSplitK|matmul|dot_kernel|splitK|cublasLt|^bmm_",
            re.I,
        ),
    ),
    ("softmax", _re(r"softmax", re.I)),
    ("pooling", _re(r"max_?pool|avg_?pool|adaptive_?(max|avg)|pool_?[123]d|pooling", re.I)),
    ("elementwise", _re(r"rotary|^(void )?scal_kernel", re.I)),
    ("index / gather", _re(r"index|bounds_check_indices|gather|scatter|embedding|take_along", re.I)),
    ("reduction", _re(r"reduce|reduction|\bsum_|argmax|argmin|nll_?loss|NLLCriterion|cross_?entropy", re.I)),
    (
        "copy / layout",
        _re(
            r"copy|transpose|cat_?array|CatArray|permute|contiguous|fill_kernel|nchwToNhwc|nhwcToNchw|reshape_and_cache",
            re.I,
        ),
    ),
    ("sort / top-k", _re(r"sort|topk|radix", re.I)),
    (
        "elementwise",
        _re(
            r"elementwise|pointwise|vectorized|unrolled|activation|gelu|silu|relu|multi_tensor_apply|adam|"
            r"quant|fp8|TensorOp",
            re.I,
        ),
    ),
]
ROLE_NAMES: tuple[Role, ...] = tuple(dict.fromkeys([r for r, _ in ROLES] + ["other", DATA_MOVEMENT]))
MATRIX, VECTOR = "matrix", "vector"  # the roofline's words for the tensor / matrix cores and the CUDA cores / ALUs
# the roles whose math unit the name tells (elementwise, reduction, ... kernels run on the vector units whatever their name)
MATH_ROLES = frozenset({"GEMM", "convolution", "attention", "triton template (GEMM/conv)"})

# CUDA-core kernels (checked before the tensor-core markers: sm80_xmma_gemm_..._ffma_... is CUDA-core).
_VECTOR = _re(
    r"ffma|(?<![a-z0-9])sgemm|_sgemm|[sdhc]gemm_largek|simt|scudnn|gemv|gemmSN_|gemmk1_|dgemm|"
    r"convolve_sgemm|(wgrad|dgrad)_(alg\d+_)?engine|winograd_nonfused",
    re.I,
)
_MATRIX = _re(
    r"tensorop|hmma|imma|[shi]\d{3,6}(gemm|cudnn|fprop|dgrad|wgrad)|wmma|w?gmma|xmma|nvjet|tensor\d+x\d+x\d+|"
    r"fmha|flash_?(fwd|bwd|attn)|flashattn|cudnn_generated_fort|^bmm_|^triton_tem_|_matmul_ogs|_MI\d+x\d+x\d+|mfma|"
    r"xdl|gtcx",
    re.I,
)
_AMD = _re(r"^Cijk_|_ZN2ck|ck_tile|\bck::|igemm_\w+_gtc|miopen|hipblaslt|rocblas|wvSplitK|__hip_", re.I)
# dtypes as names spell them. The leftmost one a name gives is its inputs' (sm90_xmma_gemm_bf16bf16_bf16f32_f32: bf16
# in, fp32 accumulate and out; fmhaSm100aKernel_QkvE4m3OBfloat16: fp8 in, bf16 out).
_DTYPE = _re(
    r"(?P<tf32>tf32)|(?P<fp8>e4m3|e5m2|fp8)|(?P<fp4>e2m1|fp4|nvf4)|(?P<bf16>bf16|bfloat16)|"
    r"(?P<fp16>fp16|f16|half|(?<![a-z])h(?:884|1688|16816)|hgemm)|(?P<int8>int8|(?<![a-z])i(?:8816|16832)|imma)|"
    r"(?P<fp64>fp64|f64|dgemm|double)|(?P<fp32>fp32|f32|float|sgemm|ffma|scudnn|s1688gemm)",
    re.I,
)
# C++ types a kernel's template arguments name (torch, CUDA, HIP, CUTLASS spellings): they say the dtype of its data
# better than a word in the name (precomputed_convolve_sgemm<__nv_bfloat16, ...> is a bf16 kernel the CUDA cores
# run, not an fp32 one). Only the template arguments are read: the parameter list holds fp32 scalars (alpha, beta)
# whatever the data.
_TYPE = _re(
    r"(?<![\w])(?:"
    r"(?P<fp8>(?:__nv_|c10::|at::|cutlass::)?(?:fp8_e4m3|fp8_e5m2|float_e4m3_t|float_e5m2_t|Float8_e\w+))|"
    r"(?P<bf16>(?:c10::|at::|cutlass::)?(?:__nv_bfloat16|nv_bfloat16|__hip_bfloat16|hip_bfloat16|bfloat16_t|BFloat16|__bf16))|"
    r"(?P<fp16>(?:c10::|at::|cutlass::)?(?:__half|half_t|half|Half|_Float16))|"
    r"(?P<tf32>(?:cutlass::)?tfloat32_t)|"
    r"(?P<fp64>double)|"
    r"(?P<fp32>float)|"
    r"(?P<int8>int8_t|signed char)"
    r")(?![\w])"
)
_NVJET = _re(r"nvjet_(?:sm\d+[a-z]?_)?([a-z])[a-z]{2}_")
_NVJET_DTYPE = {"h": "fp16", "t": "bf16", "q": "fp8", "e": "fp8", "i": "int8"}
_TRTLLM = _re(r"^bmm_[A-Za-z0-9]+_([A-Za-z0-9]+)_")  # TensorRT-LLM's bmm_<out>_<A><B>_<accumulate>
_TENSILE = _re(r"^Cijk_A[a-z]+_B[a-z]+_([A-Z0-9]+)_")
_TENSILE_DTYPE = {"S": "fp32", "D": "fp64", "H": "fp16", "B": "bf16", "I": "int8", "F": "fp8"}


@dataclass(frozen=True)
class KernelClass:
    """A kernel's role, its math unit (matrix, vector or "" when the name does not say) and dtype ("" likewise)."""

    role: Role
    unit: str = ""
    dtype: str = ""


def role(name: str) -> Role:
    """The role of a kernel from its name ("other" when no rule says)."""
    return classify(name).role


def device_role(name: str, is_kernel: bool) -> Role:
    """The role of any device activity: a kernel's from its name; a memcpy or memset moves data."""
    return device_class(name, is_kernel).role


def device_class(name: str, is_kernel: bool) -> KernelClass:
    """The class of any device activity: a kernel's from its name; a memcpy or memset moves data."""
    return classify(name) if is_kernel else KernelClass(DATA_MOVEMENT)


@lru_cache(maxsize=1 << 16)
def classify(name: str) -> KernelClass:
    """The role, math unit and dtype of a kernel, read from its name."""
    found = next((r for r, pattern in ROLES if pattern().search(name)), "other")
    unit = _unit(name, found)
    return KernelClass(found, unit, _dtype(name, unit) if unit else "")


def _unit(name: str, found: Role) -> str:
    """matrix (tensor / matrix cores), vector (CUDA cores / ALUs), or "" for a kernel whose name does not say."""
    if found not in MATH_ROLES:
        return ""
    if name.startswith("Cijk_"):  # Tensile (rocBLAS, hipBLASLt): an MFMA instruction in the name or none
        return MATRIX if re.search(r"_MI\d+x\d+", name) else VECTOR
    if _VECTOR().search(name):
        return VECTOR
    return MATRIX if _MATRIX().search(name) else ""


def _dtype(name: str, unit: str) -> str:
    """The dtype the math runs in, where the name says it."""
    if m := _NVJET().search(name):
        return _NVJET_DTYPE.get(m.group(1), "")
    if m := _TENSILE().match(name):
        return _TENSILE_DTYPE.get(m.group(1)[0], "")
    if name.startswith("_Z"):  # a mangled name (composable_kernel): its types are not spelled out
        return ""
    if m := _TRTLLM().match(name):  # the inputs' widest type sets the MMA's rate (fp8 x fp4 runs at the fp8 rate)
        named = {g for t in _DTYPE().finditer(m.group(1)) for g, v in t.groupdict().items() if v}
        return next((d for d in ("bf16", "fp16", "fp8", "fp4") if d in named), "")
    if found := _template_dtype(name):
        return found
    m = _DTYPE().search(name)
    found = (m.lastgroup or "") if m else ""
    if found == "fp32" and unit == MATRIX and re.search(r"s1688(gemm|fprop|dgrad|wgrad)", name):
        return "tf32"  # Ampere's fp32 tensor-core shape (m16n8k8) runs TF32
    return found


def _template_dtype(name: str) -> str:
    """The dtype a C++ type among the kernel's template arguments names ("" when none does): the first input operand's
    (a `T const`: gemmk1_kernel<int, float, ..., cublasGemvTensorStridedBatched<__nv_bfloat16 const>, ...> computes
    in fp32 on bf16 data), else the first one (gemv2T_kernel_val<int, int, __half, ...>, wgrad_alg0_engine<float, ...>
    put the data's type first)."""
    depth, inside = 0, list[str]()
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0 and inside:
            break  # the parameter list: its float alpha and beta say nothing of the data
        inside.append(ch if depth else " ")
    args = "".join(inside)
    found = list(_TYPE().finditer(args))
    inputs = [m for m in found if args.startswith(" const", m.end())]
    first = (inputs or found)[:1]
    return (first[0].lastgroup or "") if first else ""


def unit_words(unit: str, name: str = "") -> str:
    """The unit as a user says it: tensor cores / CUDA cores (NVIDIA), matrix cores / vector ALUs (AMD names)."""
    amd = bool(_AMD().search(name))
    if unit == MATRIX:
        return "matrix cores" if amd else "tensor cores"
    if unit == VECTOR:
        return "vector ALUs" if amd else "CUDA cores"
    return ""


def runs_on(name: str, unit: str, dtype: str) -> str:
    """Where a kernel's math runs, in words: "tensor cores, bf16", "CUDA cores, fp32" ("" when the name does not say)."""
    words = unit_words(unit, name)
    return f"{words}, {dtype}" if words and dtype else words
