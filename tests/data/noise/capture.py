"""How tests/data/noise was captured (CPU torch, torch.profiler's tensorboard_trace_handler).

python capture.py same      three captures of one unchanged loop: noise only   -> same/
python capture.py slower    one capture of the loop, then one of it made 30% slower on purpose: 13 matmuls a
                            step, not 10 (work, not a sleep: the machine's load then slows both alike) -> slower/

Each capture is schedule(wait=1, warmup=1, active=5): five profiled steps. A step is ten 384x384 matmuls,
each with a ReLU (about 10 ms on one quiet CPU thread).
"""

import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

HERE = Path(__file__).parent
STEPS_PER_CAPTURE = 2 + 5  # wait + warmup + active


def step(x: torch.Tensor, w: torch.Tensor, slower: float) -> torch.Tensor:
    for _ in range(round(10 * (1 + slower))):  # the slowdown put in on purpose: 30% more of the same work
        x = torch.relu(x @ w)
    return x


def capture(out: Path, repeat: int, slower: float) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    x, w = torch.randn(384, 384), torch.randn(384, 384) / 20
    sched = schedule(wait=1, warmup=1, active=5, repeat=repeat)
    with profile(
        activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=tensorboard_trace_handler(str(out))
    ) as p:
        for _ in range(STEPS_PER_CAPTURE * repeat):
            step(x, w, slower)
            p.step()


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1] == "same":
        capture(HERE / "same", repeat=3, slower=0.0)
    else:
        capture(HERE / "slower", repeat=1, slower=0.0)
        time.sleep(0.05)
        capture(HERE / "slower", repeat=1, slower=0.3)
