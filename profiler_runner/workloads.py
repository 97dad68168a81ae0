"""Build the callable of each workload (imports torch; only called when capturing)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
SDPA_BACKENDS = {
    "math": "MATH",
    "flash": "FLASH_ATTENTION",
    "efficient": "EFFICIENT_ATTENTION",
    "cudnn": "CUDNN_ATTENTION",
}


def build(name: str, opts: dict, device: str, dtype: str) -> tuple[Callable[[], object], str]:
    """The zero-argument step function and the file tag prefix."""
    dt = DTYPES[dtype]
    return {"matmul_add": _matmul_add, "linear": _linear, "mlp": _mlp, "attention": _attention}[name](opts, device, dt)


def _matmul_add(o, device, dt):
    n = o["size"]
    x, w, b = (torch.randn(n, n, device=device, dtype=dt) for _ in range(3))

    def fn(x, w, b):
        return torch.add(torch.matmul(x, w), b)

    return _bind(fn, x, w, b), tag_of("matmul_add", o)


def _linear(o, device, dt):
    layer = torch.nn.Linear(o["in_features"], o["out_features"], device=device, dtype=dt)
    x = torch.randn(o["batch"], o["in_features"], device=device, dtype=dt)
    return _bind(layer, x), tag_of("linear", o)


class GeGLU(torch.nn.Module):
    """gate/up/down projections without bias; down(gelu_tanh(gate(x)) * up(x))."""

    def __init__(self, dim: int, hidden: int, device, dtype) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(dim, hidden, bias=False, device=device, dtype=dtype)
        self.up = torch.nn.Linear(dim, hidden, bias=False, device=device, dtype=dtype)
        self.down = torch.nn.Linear(hidden, dim, bias=False, device=device, dtype=dtype)

    def forward(self, x):
        return self.down(F.gelu(self.gate(x), approximate="tanh") * self.up(x))


def _mlp(o, device, dt):
    model = GeGLU(o["dim"], o["hidden"], device, dt)
    x = torch.randn(o["batch"], o["seq"], o["dim"], device=device, dtype=dt)
    return _bind(model, x), tag_of("mlp", o)


def naive_attention(q, k, v):
    """Causal attention with an out-of-place masked_fill."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def inplace_attention(q, k, v):
    """Causal attention with an in-place masked_fill_."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
    scores.masked_fill_(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def sdpa_attention(backend: str) -> Callable:
    """Causal F.scaled_dot_product_attention, pinned to a backend unless auto."""

    def attn(q, k, v):
        if backend == "auto":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(getattr(SDPBackend, SDPA_BACKENDS[backend])):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    return attn


def _attention(o, device, dt):
    shape = (o["batch"], o["heads"], o["seq"], o["head_dim"])
    q, k, v = (torch.randn(*shape, device=device, dtype=dt) for _ in range(3))
    variant = o["variant"]
    fn = {"naive": naive_attention, "inplace": inplace_attention}.get(variant) or sdpa_attention(o["backend"])
    return _bind(fn, q, k, v), tag_of("attention", o)


def tag_of(name: str, o: dict) -> str:
    """The file tag's prefix for a workload's options (build() names its capture with it; so does a job's folder)."""
    if name == "matmul_add":
        return f"{o['size']}"
    if name == "linear":
        return f"{o['batch']}x{o['in_features']}x{o['out_features']}"
    if name == "mlp":
        return f"{o['batch']}x{o['seq']}x{o['dim']}x{o['hidden']}"
    tag = o["variant"] if o["variant"] != "sdpa" else f"sdpa-{o['backend']}"
    return f"{tag}_{o['batch']}x{o['heads']}x{o['seq']}x{o['head_dim']}"


def _bind(fn, *args):
    """A zero-argument step; torch.compile wraps fn itself, see runner.compile_step."""
    step = lambda: fn(*args)  # noqa: E731 - a closure is the clearest form here
    step.fn, step.args = fn, args  # type: ignore[attr-defined]
    return step
