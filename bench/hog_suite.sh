#!/usr/bin/env bash
# The suite under load: two CPU hogs (`yes > /dev/null`, one per core of a 2-core machine) run for the whole
# pytest run and are stopped after it, RUNS times in a row; prints one line per run and exits non-zero if
# any run failed. Issue 21: no test may depend on timing it does not control.
# Usage: bench/hog_suite.sh [RUNS=3] [pytest args...]      e.g. bench/hog_suite.sh 1 tests/test_sandbox.py
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-3}; shift || true
[ $# -gt 0 ] || set -- -m "not live"
HOGS=${HOGS:-2}
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done; hogs=(); }
trap stop_hogs EXIT
failed=0
for run in $(seq "$RUNS"); do
  for _ in $(seq "$HOGS"); do yes > /dev/null & hogs+=($!); done
  start=$(date +%s)
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@" > "/tmp/hog_suite.$$.$run.log" 2>&1; rc=$?
  stop_hogs
  echo "run $run/$RUNS: rc=$rc $(( $(date +%s) - start ))s $(tail -1 "/tmp/hog_suite.$$.$run.log")"
  [ "$rc" -eq 0 ] || { failed=1; grep -E "^(FAILED|ERROR) " "/tmp/hog_suite.$$.$run.log" | sed 's/^/    /'; }
done
exit "$failed"
