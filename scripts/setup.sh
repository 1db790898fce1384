#!/usr/bin/env bash
# Create .venv (if needed) and install autosig with TensorFlow and the test tools.
# Idempotent: reinstalls only when pyproject.toml changed since the last run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup: Python 3.10+ is required (found: $("$PYTHON" --version 2>&1))" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv" >&2
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.autosig-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: installing autosig[tensorflow,test] into .venv (first run takes a few minutes)" >&2
    .venv/bin/python -m pip install --disable-pip-version-check -q --upgrade pip >/dev/null 2>&1 || true
    if ! .venv/bin/python -m pip install --disable-pip-version-check -q -e '.[tensorflow,test]' \
            > .venv/pip-install.log 2>&1; then
        grep -v "^WARNING: Location" .venv/pip-install.log | tail -30 >&2
        echo "setup: pip install failed (full log: .venv/pip-install.log)" >&2
        exit 2
    fi
    .venv/bin/python -c 'import autosig, libcst, click, unidiff, tensorflow' 2>/dev/null \
        || { echo "setup: installed packages do not import" >&2; exit 2; }
    echo "$want" > "$stamp"
fi
# autosig is installed editable: its modules compile on first import, and on every start
# when bytecode writing is off (PYTHONDONTWRITEBYTECODE, read-only checkouts): 0.2 s of a
# 0.3 s `autosig check FILE`. Compile them now, as pip does for a regular install
# (quick when nothing changed; a module edited later just compiles again until then).
.venv/bin/python -m compileall -q autosig >/dev/null || true
