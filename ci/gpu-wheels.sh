#!/usr/bin/env bash
# The wheels a GPU node without network needs for ci/gpu-smoke.sh, into one folder (< 56 MiB, so
# that it and this tree travel in a 64 MiB device call). Run where pip reaches a registry:
#
#   bash ci/gpu-wheels.sh [DIR]          # default .gpu-wheels (git-ignored)
#
# Into DIR, as Python 3.12 manylinux x86_64 wheels (pip download --python-version 3.12
# --only-binary=:all:, nothing to build on the node):
# - what the node's image lacks: duckdb (history's cache). Not ruptures: nothing imports it since
#   history's change points moved to distbench.stats (#25);
# - every package the CLI process imports, at the release tested here (this checkout's .venv, or
#   $PYTHON): typer, rich, pydantic and their dependencies, and click (typer 0.29 vendors its
#   own; cli/app.py imports click, if there, only to catch an older typer's errors);
# - distbench's own wheel, built from this tree (pip wheel --no-deps), and SOURCE.sha256, the
#   stamp of the sources it was built from: ci/gpu-smoke.sh refuses a folder whose stamp is not
#   this tree's, so a fix is never smoke-tested with an older wheel;
# - MANIFEST.txt: each wheel and its size.
# The wheel is checked to hold every module of bench/, collectors/ and reports/ (a package left
# out of pyproject.toml's list would be missing on the node only).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.gpu-wheels}
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
LIMIT_MB=56
mkdir -p "$DIR"
rm -f "$DIR"/distbench-*.whl
version() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
download=("$PY" -m pip download -q --disable-pip-version-check --python-version 3.12
  --implementation cp --only-binary=:all: "${platforms[@]}" -d "$DIR")
# the CLI's closure, resolved for 3.12 at the tested releases
"${download[@]}" "typer==$(version typer)" "rich==$(version rich)" "click==$(version click)" \
  "pydantic==$(version pydantic)" "shellingham==$(version shellingham)"
# what the image lacks
"${download[@]}" --no-deps "duckdb==$(version duckdb)"
"$PY" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation -w "$DIR" . \
  >/dev/null
"$PY" ci/gpu_smoke.py --source-hash >"$DIR/SOURCE.sha256"

# every module of the tree is in the wheel
wheel=$(ls "$DIR"/distbench-*.whl)
missing=$("$PY" - "$wheel" <<'PY'
import sys, zipfile
from pathlib import Path
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
roots = {"bench": "distbench", "collectors": "distbench/collectors", "reports": "distbench/reports"}
for src, dst in roots.items():
    for path in sorted(Path(src).rglob("*.py")):
        if f"{dst}/{path.relative_to(src).as_posix()}" not in names:
            print(f"{dst}/{path.relative_to(src).as_posix()}")
PY
)
if [ -n "$missing" ]; then
  echo "gpu-wheels: the distbench wheel lacks $(echo "$missing" | wc -l) modules of this tree," \
    "first $(echo "$missing" | head -1): add its package to pyproject.toml [tool.setuptools]" >&2
  exit 1
fi
(cd "$DIR" && ls -l -- *.whl | awk '{printf "%s\t%d\n", $NF, $5}') >"$DIR/MANIFEST.txt"
total=$(du -sm "$DIR" | cut -f1)
echo "gpu-wheels: $(ls "$DIR"/*.whl | wc -l) wheels, ${total} MiB in $DIR (source $(cut -c1-12 "$DIR/SOURCE.sha256"))"
if [ "$total" -gt "$LIMIT_MB" ]; then
  echo "gpu-wheels: $DIR holds $total MiB, over $LIMIT_MB: a device call carries 64 MiB with the tree" >&2
  exit 1
fi
