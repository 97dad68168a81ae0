"""What a GPU kernel does, read from its name: its role (GEMM, attention, collective, ...).

Rules run in order and the first match wins. Triton kernels come first: their names are chosen by
whoever wrote them (Inductor's triton_poi_/red_/per_/tem_ prefixes, or a hand-written kernel such
as create_flashinfer_kv_indices_triton), so a word like "flashinfer" or "attention" in them says
nothing about the role. Then collectives, whose names embed the op they move data for, then
attention before GEMM (attention kernels are built from GEMMs and often say so), then the rest.
"""

from __future__ import annotations

import re

Role = str
ROLES: list[tuple[Role, re.Pattern[str]]] = [
    ("triton pointwise", re.compile(r"^triton_poi_")),
    ("triton reduction", re.compile(r"^triton_(red|per)_")),
    ("triton template (GEMM/conv)", re.compile(r"^triton_tem_")),
    ("triton", re.compile(r"^triton_|_triton(_|$)|^_?triton", re.I)),
    (
        "collective",
        re.compile(r"nccl|rccl|\bhccl|xccl|oneccl|msccl|c10d::|all_?reduce|all_?gather|reduce_?scatter", re.I),
    ),
    (
        "attention",
        re.compile(
            r"flash_?(fwd|bwd|attn)|flashattn|fmha|mha_(fwd|bwd)|(^|_)attn_(fwd|bwd)|_attn_|attention_kernel|efficient_attention|"
            r"cudnn.*(sdpa|flash|attn|mha)|batch_?(prefill|decode)|single_?(prefill|decode)|paged_?attention|"
            r"flashinfer.*(prefill|decode|attention)|ck_tile::Fmha|sdpa",
            re.I,
        ),
    ),
    (
        "convolution",
        re.compile(
            r"conv|implicit_?gemm|igemm_(fwd|bwd|wrw)|winograd|fprop|dgrad|wgrad|im2col|scudnn|cudnn::cnn", re.I
        ),
    ),
    (
        "GEMM",
        re.compile(
            r"gemm|gemv|cutlass|cublas|nvjet|xmma|Cijk_|hipblaslt|rocblas|wvSplitK|kernel_gemm|"
            r"matmul|sgemm|hgemm|dot_kernel|splitK",
            re.I,
        ),
    ),
    ("normalization", re.compile(r"layer_?norm|rms_?norm|batch_?norm|group_?norm|bn_(fw|bw)|normalization", re.I)),
    ("softmax", re.compile(r"softmax", re.I)),
    ("elementwise", re.compile(r"rotary", re.I)),
    ("index / gather", re.compile(r"index|gather|scatter|embedding|take_along", re.I)),
    ("reduction", re.compile(r"reduce|reduction|\bsum_|argmax|argmin", re.I)),
    ("copy / layout", re.compile(r"copy|transpose|cat_?array|CatArray|permute|contiguous|fill_kernel", re.I)),
    ("sort / top-k", re.compile(r"sort|topk|radix", re.I)),
    ("elementwise", re.compile(r"elementwise|pointwise|vectorized|unrolled|activation|gelu|silu|relu", re.I)),
]


def role(name: str) -> Role:
    """The role of a kernel from its name ("other" when no rule says)."""
    for r, pattern in ROLES:
        if pattern.search(name):
            return r
    return "other"
