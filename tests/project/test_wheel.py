"""What a user who installs the wheel gets: every module and every file the code opens, a console script and
`python -m` that start, a --version that names tracetui's, Python's and torch's versions, and an entry hall
where no module imports its caller. (.ci/wheel_check.sh installs the built wheel in a new venv and runs it.)"""

from __future__ import annotations

import ast
import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

import tui
from tui.cli import help as cli_help
from tui.model import samples

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PACKAGES = ("tui", "tracetui", "profiler_runner")
DATA_NAME = re.compile(r"^[\w./-]+\.(tcss|css|toml|json|gz|md|txt|typed|csv)$")  # a literal naming a data file


def source_files() -> set[str]:
    """Every file under the packages' folders (no caches), as the wheel names it: tui/app/app.tcss."""
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                found.add(path.relative_to(ROOT).as_posix())
    return found


def named_data_files() -> set[str]:
    """The files the code opens by name: each string literal that names a file found beside its module or in a
    package folder above it (CSS_PATH = "app.tcss", files("tui.model") / "data/gpus.toml")."""
    found = set()
    for module in (ROOT / p for p in PACKAGES):
        for path in module.rglob("*.py"):
            folders = [path.parent, *(p for p in path.parents if ROOT in p.parents)]
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and DATA_NAME.match(node.value):
                    hits = [f / node.value for f in folders if (f / node.value).is_file()]
                    found |= {hit.relative_to(ROOT).as_posix() for hit in hits[:1]}
    return found


def shipped_samples() -> set[str]:
    """The demo samples' files (a folder of ranks: each file in it) and their attribution."""
    paths = [p for s in samples.SAMPLES for p in (sorted(s.path.iterdir()) if s.ranks else [s.path])]
    return {p.relative_to(ROOT).as_posix() for p in [*paths, samples.ATTRIBUTION]}


def test_the_scan_finds_the_files_the_code_opens():
    named = named_data_files()
    assert {"tui/app/app.tcss", "tui/model/data/gpus.toml"} <= named
    assert all(name in source_files() for name in named)


def test_package_data_covers_every_file_beside_the_code():
    """pyproject's package-data patterns (as setuptools globs them) match every file in the package folders but
    the modules, and every folder with modules is a package (find_packages skips one without __init__.py)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    covered = set()
    for package, patterns in config["package-data"].items():
        for pattern in patterns:
            matched = glob.glob(str(ROOT / package.replace(".", "/") / pattern), recursive=True)
            covered |= {Path(m).relative_to(ROOT).as_posix() for m in matched if os.path.isfile(m)}
    data = {f for f in source_files() if not f.endswith(".py")}
    assert data - covered == set(), "add these to [tool.setuptools.package-data]"
    assert named_data_files() | shipped_samples() <= covered
    folders = {Path(f).parent for f in source_files() if f.endswith(".py")}
    assert [f for f in folders if not (ROOT / f / "__init__.py").is_file()] == []
    assert config["packages"]["find"]["include"] == [f"{p}*" for p in PACKAGES]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel setuptools builds from a copy of the source (the checkout gets no build/ or egg-info)."""
    pytest.importorskip("build")
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, src / package, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy(ROOT / name, src / name)
    cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)]
    subprocess.run(cmd, check=True, capture_output=True)
    [built] = out.glob("tracetui-*.whl")
    return zipfile.ZipFile(built)


@pytest.mark.slow
def test_the_wheel_holds_every_module_and_every_file_the_code_opens(wheel):
    names = set(wheel.namelist())
    assert source_files() - names == set()  # the modules and every data file beside them
    assert named_data_files() | shipped_samples() | {"tracetui/py.typed"} <= names
    info = f"tracetui-{tui.__version__}.dist-info"
    meta = wheel.read(f"{info}/METADATA").decode()
    assert f"\nVersion: {tui.__version__}\n" in meta and "\nLicense-Expression: MIT\n" in meta
    assert "\nProvides-Extra: sql\n" in meta and "\nProvides-Extra: mcp\n" in meta
    assert "torch" not in [line.split()[1] for line in meta.splitlines() if line.startswith("Requires-Dist: ")]
    assert "tracetui = tui.cli:main" in wheel.read(f"{info}/entry_points.txt").decode()
    assert {f"{info}/licenses/LICENSE", f"{info}/licenses/tui/model/data/samples/ATTRIBUTION.md"} <= names
    assert not [n for n in names if n.startswith(("tests/", "sample_traces/", "benchmarks/"))]


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize("module", ["tui", "tui.cli", "tracetui"])
def test_python_dash_m_runs_the_command_line(module):
    done = _cli("-m", module, "--version")
    assert done.returncode == 0 and done.stdout.splitlines()[0] == f"tracetui {tui.__version__}"
    assert _cli("-m", module, "demo", "--list").stdout.splitlines()[1].startswith("h100-bert-small ")


@pytest.mark.parametrize(
    ("argv", "code"),
    [(["summary", "demo:h100-bert-small"], 0), (["summary", "/nonexistent/trace.json"], 2), (["summary"], 2)],
)
def test_python_dash_m_tracetui_says_and_exits_as_the_script(argv, code):
    """`python -m tracetui` (the API's package) is the command line itself: its output and exit code are the script's."""
    api, cli = _cli("-m", "tracetui", *argv), _cli("-m", "tui", *argv)
    assert (api.returncode, api.stdout, api.stderr) == (cli.returncode, cli.stdout, cli.stderr)
    assert api.returncode == code


def test_version_names_python_and_the_torch_profile_would_import_without_importing_it(tmp_path):
    """The first torch on sys.path is the one `profile` imports: its version from its metadata, its build from its
    version.py; a torch whose import would fail shows that none is imported."""
    fake = tmp_path / "site"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (fake / "torch" / "version.py").write_text(
        "__version__ = '2.9.1+cu124'\ncuda: Optional[str] = '12.4'\nhip = None\n"
    )
    (fake / "torch-2.9.1+cu124.dist-info").mkdir()
    (fake / "torch-2.9.1+cu124.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1+cu124\n"
    )
    probe = "import sys; from tui.cli import main\ntry: main(['--version'])\nexcept SystemExit: pass\n"
    probe += "print([m for m in ('torch', 'numpy', 'textual', 'rich') if m in sys.modules])"
    done = _cli("-c", probe, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), str(ROOT)])})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"tracetui {tui.__version__}"
    assert lines[1].startswith(f"Python {sys.version.split()[0]} (")
    assert lines[2] == f"torch 2.9.1+cu124, CUDA 12.4 ({fake / 'torch'}): what tracetui profile runs"
    assert lines[3] == "[]"  # neither torch nor anything heavy was imported


def test_version_without_torch_says_only_profile_needs_it(monkeypatch):
    from importlib import util

    find = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *a: None if name == "torch" else find(name, *a))
    assert cli_help.torch_version() == "torch: not installed in this Python (only tracetui profile needs it)"


def test_a_cpu_build_of_torch_says_so(tmp_path):
    (tmp_path / "version.py").write_text("__version__ = '2.13.0+cpu'\ncuda: Optional[str] = None\nhip = None\n")
    assert cli_help._built_for(tmp_path) == ", CPU only"
    (tmp_path / "version.py").write_text(
        "__version__ = '2.6.0+rocm6.2'\ncuda = None\nhip: Optional[str] = '6.2.41133'\n"
    )
    assert cli_help._built_for(tmp_path) == ", ROCm (HIP) 6.2.41133"


def test_no_module_imports_its_caller():
    """No import circle at all among the modules of tui, tracetui and profiler_runner (imports inside functions and
    under TYPE_CHECKING count): stricter than import-linter's acyclic_siblings, which squashes each sibling."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph(*PACKAGES)
    circles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                circles.append(" -> ".join([module, *back]))
    assert circles == []
    assert {"tui.cli.demo", "tui.cli.commands", "tui.sql.session", "tui.model.samples"} <= graph.modules


@pytest.mark.parametrize("argv", [["mcp", "--help"], ["mcp"]])
def test_mcp_without_its_sdk_names_the_extra_in_one_line(argv, monkeypatch, capsys):
    """A wheel installed without [mcp]: `tracetui mcp` and its --help say which extra to install, exit 2."""
    import importlib.util

    from tui.cli import main

    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else find(name, *a))
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` fails as it does where it is not installed
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err == "tracetui: error: tracetui mcp needs the MCP SDK: pip install 'tracetui[mcp]'\n"


def test_sql_without_duckdb_names_the_extra_in_one_line(monkeypatch, capsys):
    from tui.cli import main

    monkeypatch.setitem(sys.modules, "duckdb", None)
    assert main(["sql", "demo:cpu-matmul-eager", "SELECT 1"]) == 2
    assert capsys.readouterr().err == "tracetui: error: tracetui sql needs DuckDB: pip install 'tracetui[sql]'\n"
    assert main(["sql", "demo:cpu-matmul-eager", "--schema"]) == 0  # the schema needs no DuckDB
