#!/usr/bin/env bash
# The package as a user on a fresh server gets it: build the sdist and, from it, the wheel (python -m build), check
# both with twine, install the wheel (not the checkout) into a new venv with its own dependencies only (no torch),
# and run what a user runs first, from a folder outside the checkout; then the wheel alone on each of Python
# 3.10-3.13 this machine has (a summary, and a viewer session pressing every view key: .ci/viewer_session.py);
# then add the [sql] and [mcp] extras and run those. Needs build and twine (tracetui's [dev] extra) in the python
# on PATH, and the package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tracetui-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' tui/__init__.py)
BERT=demo:h100-bert-small
checks=0

say() { printf 'wheel check: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }
# run CODE CMD...: run it, keeping stdout and stderr in $WORK/out and $WORK/err; fail unless it exits CODE
run() {
    local want=$1 got=0
    shift
    "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || got=$?
    checks=$((checks + 1))
    if [ "$got" != "$want" ]; then
        cat "$WORK/out" "$WORK/err"
        fail "$* exited $got, not $want"
    fi
}
has() { grep -qF -- "$2" "$WORK/$1" || { cat "$WORK/$1"; fail "no '$2' in $1"; }; }
one_line() { [ "$(wc -l <"$WORK/err")" = 1 ] && has err "$1" || { cat "$WORK/err"; fail "stderr is not one line with '$1'"; }; }

say "building the sdist and the wheel from it"
"$PY" -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "python -m build"; }
"$PY" -m twine check --strict "$WORK"/dist/*
WHEEL=$(echo "$WORK"/dist/tracetui-"$VERSION"-py3-none-any.whl)
[ -f "$WHEEL" ] || fail "no wheel for version $VERSION in $(ls "$WORK/dist")"
say "$(basename "$WHEEL"): $(du -k "$WHEEL" | cut -f1) KB, sdist $(du -k "$WORK"/dist/*.tar.gz | cut -f1) KB"

"$PY" -m venv "$WORK/venv"
V="$WORK/venv/bin"
pip_install() { "$V/python" -m pip install -q "$@" >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; fail "pip install $*"; }; }
pip_install "$WHEEL"
cd "$WORK" # nothing of the checkout on sys.path from here on
export TRACETUI_CACHE_DIR="$WORK/cache" TRACETUI_CONFIG_DIR="$WORK/config" TRACETUI_COLUMNS=100
[ "$("$V/python" -c 'import tui; print(tui.__file__)')" != "$ROOT/tui/__init__.py" ] || fail "tui is the checkout's"

say "the wheel alone: tracetui $VERSION, no torch, no extras"
run 0 "$V/tracetui" --version
[ "$(head -1 out)" = "tracetui $VERSION" ] || fail "--version says $(head -1 out)"
has out "Python 3." && has out "torch: not installed in this Python"
run 0 "$V/tracetui" --help && has out "demo"
run 0 "$V/tracetui" demo --help && has out "tracetui demo --list"
run 0 "$V/tracetui" demo --list && has out "h100-bert-small"
[ -f "$(tail -1 out)" ] || fail "the samples' attribution $(tail -1 out) is not installed"
run 0 "$V/tracetui" summary "$BERT" && has out "Verdict"
run 0 "$V/tracetui" ops "$BERT" --limit 5 && has out "Self CUDA time total: 309.437us"
run 0 "$V/tracetui" ranks demo:hta-2rank --workers 1 && has out "STRAGGLER"
run 0 "$V/tracetui" diff demo:cpu-matmul-eager demo:cpu-matmul-compiled && has out "A: demo:cpu-matmul-eager"
run 0 "$V/python" -c "import tracetui; print(tracetui.load('$BERT').summary()['verdict'])"
[ "$(cat out)" = "overhead-bound" ] || fail "the API's verdict is $(cat out)"
run 2 "$V/tracetui" summary demo:nope && one_line "tracetui demo --list"
run 0 "$V/tracetui" workloads && has out "matmul_add"
run 2 "$V/tracetui" profile matmul_add --device cpu --no-open && one_line "tracetui profile runs your own torch"
run 2 "$V/tracetui" sql "$BERT" "SELECT count(*) FROM events" && one_line "pip install 'tracetui[sql]'"
run 2 "$V/tracetui" mcp --help && one_line "pip install 'tracetui[mcp]'"
run 2 "$V/tracetui" mcp && one_line "pip install 'tracetui[mcp]'"
run 0 "$V/python" "$ROOT/.ci/viewer_session.py" && has out "key 8: critical"

# each supported interpreter this machine has (pyenv's, else on PATH): the wheel in a venv of its own, the headless
# summary and a viewer session pressing every view key. An interpreter not here is said, not failed.
for minor in 3.10 3.11 3.12 3.13; do
    py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$minor".*/bin/python 2>/dev/null | tail -1 || true)
    [ -n "$py" ] || py=$(command -v "python$minor" || true)
    if [ -z "$py" ]; then
        say "Python $minor: not on this machine, skipped"
        continue
    fi
    "$py" -m venv "$WORK/venv-$minor"
    V="$WORK/venv-$minor/bin"
    pip_install "$WHEEL"
    run 0 "$V/tracetui" summary "$BERT" && has out "Verdict"
    run 0 "$V/python" "$ROOT/.ci/viewer_session.py" && has out "key 8: critical"
    say "Python $("$V/python" -c 'import platform; print(platform.python_version())'): summary and every view key ok"
done
V="$WORK/venv/bin"

say "with the [sql] and [mcp] extras"
pip_install "$WHEEL[sql,mcp]"
run 0 "$V/tracetui" sql "$BERT" "SELECT count(*) AS n FROM events WHERE kind = 'kernel'" --format csv
[ "$(cat out)" = "$(printf 'n\n60')" ] || fail "sql counted $(cat out)"
run 0 "$V/tracetui" mcp --help && has out "claude mcp add tracetui"
cat >"$WORK/agent.py" <<'EOF'
"""An agent's first call: tracetui mcp over stdio, the summary tool on a shipped sample."""
import asyncio
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main() -> None:
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=dict(os.environ))
    async with Client(server, read_timeout_seconds=120) as client:
        result = await client.call_tool("summary", {"trace": "demo:h100-bert-small"})
        assert not result.is_error, result.content
        print(result.structured_content["verdict"])


asyncio.run(main())
EOF
run 0 "$V/python" "$WORK/agent.py" "$V/tracetui"
[ "$(cat out)" = "overhead-bound" ] || fail "the MCP summary's verdict is $(cat out)"

say "ok: $checks commands from the installed wheel did what a user expects"
