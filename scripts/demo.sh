#!/usr/bin/env bash
# Demo of the whole autosig workflow on one golden case, in a temporary copy:
#   check -> profile -> explain -> fix --diff -> verify -> fix -> run again.
# Usage: bash scripts/demo.sh [CASE]   (default: 24_loss_object_step; see golden/)
# Idempotent: installs with scripts/setup.sh (a no-op when up to date), works in a fresh
# temporary directory, changes nothing in the repository. Exits non-zero when a step
# fails unexpectedly (fix --diff exiting 1 because it has changes is expected).
set -uo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
case_name="${1:-24_loss_object_step}"
if [ ! -f "golden/$case_name/driver.py" ]; then
    echo "demo: no golden case '$case_name'; choose one of: $(ls golden | grep '^[0-9]' | tr '\n' ' ')" >&2
    exit 2
fi

bash scripts/setup.sh || exit 2
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
python="$repo/.venv/bin/python"
work="$(mktemp -d "${TMPDIR:-/tmp}/autosig-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "golden/$case_name/model.py" "golden/$case_name/driver.py" "$work/"
cd "$work"

failed=0
bold="" plain=""
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
header() {
    printf '\n%s==> %s%s\n' "$bold" "$1" "$plain"
    printf '$ %s\n' "$2"
}
available() {
    "$python" -m autosig "$1" --help >/dev/null 2>&1
}
# step TITLE ALLOWED_EXIT_CODES COMMAND... : run, show, and judge the exit code.
step() {
    local title="$1" allowed="$2"
    shift 2
    header "$title" "$*"
    "$@"
    local code=$?
    if [[ " $allowed " == *" $code "* ]]; then
        echo "(exit $code: as expected)"
    else
        echo "demo: step '$title' exited $code (expected: $allowed)" >&2
        failed=1
    fi
}
# autosig_step TITLE ALLOWED SUBCOMMAND ARGS... : skip, saying so, if SUBCOMMAND is missing.
autosig_step() {
    local title="$1" allowed="$2" sub="$3"
    if ! available "$sub"; then
        header "$title" "autosig $sub ..."
        echo "(skipped: 'autosig $sub' is not available in this version)"
        return
    fi
    shift 2
    step "$title" "$allowed" "$python" -m autosig "$@"
}

echo "autosig demo on golden/$case_name (copied to $work)"
sed -n '1,/^$/p' "$repo/golden/$case_name/README.md" | head -1
step "the workload as it is: note the TRACES line" "0" "$python" driver.py
autosig_step "1. static findings (no TensorFlow, no code run)" "0 1" check model.py
autosig_step "2. record every tf.function call of the workload" "0" \
    profile -o .autosig/profile.json -- "$python" driver.py
autosig_step "3. why each function retraced" "0" explain .autosig/profile.json
autosig_step "4. review the fix as a diff (exit 1: there are changes)" "1" \
    fix model.py --profile .autosig/profile.json --diff
autosig_step "5. prove it: original vs rewritten, side by side" "0" \
    verify --profile .autosig/profile.json -- "$python" driver.py
autosig_step "6. write the fix" "0 1" fix model.py --profile .autosig/profile.json
step "7. the workload after the fix: compare the TRACES line" "0" "$python" driver.py

if [ "$failed" -ne 0 ]; then
    printf '\ndemo: some steps failed (see above)\n' >&2
    exit 1
fi
printf '\ndemo: done\n'
