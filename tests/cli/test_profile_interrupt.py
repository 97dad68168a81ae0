"""Ctrl-C during `tracetui profile` is an interrupt (exit 130, no internal error), wherever it lands: pressed 3-5 s
in, while Kineto prepares its trace, it came out as "internal error: AssertionError: Profiler must be initialized
before starting trace" (4 of 4 tries)."""

from __future__ import annotations

import pytest

from tui.cli import main

torch = pytest.importorskip("torch", reason="capturing needs torch")
pytestmark = pytest.mark.slow


def test_ctrl_c_while_the_profiler_prepares_is_an_interrupt(tmp_path, capsys, monkeypatch):
    from torch.profiler import profiler

    def pressed(self) -> None:  # where Ctrl-C lands 3-5 s in: Kineto's preparation, on the step into warm-up
        raise KeyboardInterrupt

    monkeypatch.setattr(profiler._KinetoProfile, "prepare_trace", pressed)
    code = main(["profile", "matmul_add", "--device", "cpu", "--no-open", "-o", str(tmp_path / "t.json")])
    err = capsys.readouterr().err
    assert code == 130 and "internal error" not in err and "AssertionError" not in err
    assert not list(tmp_path.iterdir())  # nothing half written


def test_another_assertion_of_torch_is_still_ours_to_say():
    from profiler_runner.runner import interrupt_kept

    with pytest.raises(AssertionError, match="a bug"), interrupt_kept():
        raise AssertionError("a bug")
