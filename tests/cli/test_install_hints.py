"""Install hints say what works for how tracetui was installed: under pipx, `pipx inject tracetui ...` (pip install
'tracetui[sql]' does not reach pipx's environment); elsewhere `pip install`."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import SAMPLES

from tui.cli import main
from tui.cli.install import extra_hint, pipx_env

BERT = str(SAMPLES / "h100-bert-small.json.gz")


@pytest.fixture
def pipx(tmp_path, monkeypatch):
    """tracetui running from an environment pipx made: its root holds pipx_metadata.json, its name the package's."""
    root = tmp_path / "venvs" / "tracetui"
    root.mkdir(parents=True)
    (root / "pipx_metadata.json").write_text('{"pipx_metadata_version": "0.5"}')
    monkeypatch.setattr(sys, "prefix", str(root))
    return root


def test_pip_outside_pipx(tmp_path):
    assert pipx_env(str(tmp_path)) is None
    assert extra_hint("sql", str(tmp_path)) == "pip install 'tracetui[sql]'"


def test_sql_without_duckdb_under_pipx_says_pipx_inject(pipx, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)  # not installed: importing it raises ImportError
    assert main(["sql", BERT, "SELECT 1"]) == 2
    err = capsys.readouterr().err
    assert err == "tracetui: error: tracetui sql needs DuckDB: pipx inject tracetui 'duckdb>=1.1'\n"


def test_mcp_without_its_sdk_under_pipx_says_pipx_inject(pipx, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert main(["mcp"]) == 2
    assert "pipx inject tracetui 'mcp>=2,<3'" in capsys.readouterr().err


def test_profile_without_torch_under_pipx_says_pipx_inject(pipx, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert main(["profile", "matmul_add", "--device", "cpu", "--no-open"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pipx inject tracetui torch" in err and "pip install" not in err
