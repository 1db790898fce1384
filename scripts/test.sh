#!/usr/bin/env bash
# Install everything (idempotent) and run the whole test suite on all cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
exec .venv/bin/python -m pytest -n "${AUTOSIG_TEST_JOBS:-auto}" -q "$@"
