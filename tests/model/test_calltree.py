"""The call tree data: roots per step, merged siblings hottest first, GPU work under launches."""

from __future__ import annotations

from conftest import SAMPLES, X, write_trace

from tui.model import load_trace
from tui.model.analyses.calltree import CallTree
from tui.model.analyses.results import Results


def _tree(path, merge=True):
    return CallTree(Results(load_trace(path, use_cache=False)), merge=merge)


def test_structure_on_inline_events(tmp_path):
    events = [
        X("ProfilerStep#1", 0, 100, cat="user_annotation"),
        X("aten::linear", 10, 40, External_id=1),
        X("aten::addmm", 12, 30, External_id=2),
        X("cudaLaunchKernel", 20, 5, cat="cuda_runtime", External_id=2, correlation=7),
        X("aten::linear", 60, 20, External_id=3),
        X("gemm", 30, 8, cat="kernel", pid=0, tid=7, External_id=2, correlation=7),
    ]
    tree = _tree(write_trace(tmp_path / "t.json", events))
    (step,) = tree.roots()
    assert (step.name, step.kind, step.total_ns, step.gpu_ns) == ("ProfilerStep#1", "step", 100_000, 8_000)
    (linear,) = tree.children(step)  # the two aten::linear calls merged into one node
    assert (linear.name, linear.count, linear.total_ns, linear.self_ns) == ("aten::linear", 2, 60_000, 30_000)
    (addmm,) = tree.children(linear)
    (launch,) = tree.children(addmm)
    assert launch.kind == "runtime"
    (kernel,) = tree.children(launch)
    assert (kernel.name, kernel.kind, kernel.total_ns) == ("gemm", "gpu", 8_000)
    assert tree.path_to(5) == [0, 1, 2, 3, 5]


def test_unmerged_siblings_stay_in_time_order(tmp_path):
    events = [X("ProfilerStep#1", 0, 100, cat="user_annotation"), X("b", 10, 5), X("a", 20, 50), X("b", 80, 5)]
    tree = _tree(write_trace(tmp_path / "t.json", events), merge=False)
    assert [n.name for n in tree.children(tree.roots()[0])] == ["b", "a", "b"]
    merged = _tree(write_trace(tmp_path / "t.json", events))
    assert [(n.name, n.count) for n in merged.children(merged.roots()[0])] == [("a", 1), ("b", 2)]  # hottest first


def test_real_trace_hot_path_ends_in_gpu_work():
    tree = _tree(SAMPLES / "h100-bert-small.json.gz")
    node = tree.roots()[0]
    assert node.name == "ProfilerStep#6" and node.gpu_ns > 0
    for _ in range(40):
        kids = [k for k in tree.children(node) if k.gpu_ns > 0]
        if not kids:
            break
        assert kids == sorted(kids, key=lambda k: -k.total_ns)
        node = kids[0]
    assert node.kind == "runtime" and tree.children(node)[0].kind == "gpu"


def test_threads_are_roots_when_there_are_no_steps():
    tree = _tree(SAMPLES / "b300-moe-small.json.gz")
    roots = tree.roots()
    assert roots and all(r.kind != "step" for r in roots)


def test_2021_steps_written_as_operators_are_steps():
    """Builds from 2021 write ProfilerStep#N with category Operator; the GPU copy is not a second step."""
    tree = _tree(SAMPLES / "v100-2021-small.json.gz")
    assert [r.name for r in tree.roots() if r.kind == "step"] == ["ProfilerStep#2"]


def test_other_threads_get_their_own_root_beside_the_steps():
    tree = _tree(SAMPLES / "a100-ddp-nccl.json.gz")
    roots = tree.roots()
    assert [r.kind for r in roots[:3]] == ["step", "step", "step"]
    autograd = next(r for r in roots if r.kind == "thread" and r.name.startswith("autograd thread"))
    assert autograd.gpu_ns > 0
    names = {n.name for n in tree.children(autograd)}
    assert any("Backward" in n for n in names)


def test_many_steps_are_grouped_and_a_kernel_is_still_found():
    """A long capture opens with groups of steps, not thousands of roots; reveal still reaches a deep node."""
    from benchmarks.tile import tile_columns
    from tui.model.analyses.calltree import STEPS_PER_GROUP
    from tui.model.analyses.results import Results

    a = Results(tile_columns(load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False), 120))
    tree = CallTree(a)
    roots = tree.roots()
    groups = [r for r in roots if r.kind == "steps"]
    assert len(groups) == 3 and sum(g.count for g in groups) == 120
    assert [n.kind for n in tree.children(groups[0])] == ["step"] * STEPS_PER_GROUP
    kernel = int(next(i for i in a.nesting.order[::-1] if a.trace.x.cat[i] == 4 and a.links.launcher[i] >= 0))
    assert set(tree.path_to(kernel)) & set(groups[-1].events.tolist())  # its step is in the last group
