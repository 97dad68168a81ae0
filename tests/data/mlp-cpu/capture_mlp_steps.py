import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(256, 512)
        self.act = nn.GELU()
        self.l2 = nn.Linear(512, 128)

    def forward(self, x):
        return self.l2(self.act(self.l1(x)))


torch.manual_seed(0)
m = MLP()
opt = torch.optim.SGD(m.parameters(), lr=0.01)
x = torch.randn(64, 256)
y = torch.randn(64, 128)
with profile(
    activities=[ProfilerActivity.CPU],
    record_shapes=True,
    with_stack=True,
    schedule=schedule(wait=1, warmup=1, active=2),
    on_trace_ready=lambda p: p.export_chrome_trace("mlp_steps.json"),
) as prof:
    for _i in range(5):
        with record_function("my_forward"):
            out = m(x)
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
print(torch.__version__)
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25))
