#!/usr/bin/env bash
# Time one stage of a build: run CMD, then record "NAME<TAB>SECONDS<TAB>STATUS" in the
# stages file ($REPRO_STAGES, else _build/stages.tsv), which `scripts/stage.sh --report`
# prints as a table (make html does at its end), so the log shows where the time went.
# Usage: scripts/stage.sh NAME CMD [ARGS...] | scripts/stage.sh --report | --reset
set -uo pipefail
file="${REPRO_STAGES:-$(cd "$(dirname "$0")/.." && pwd)/_build/stages.tsv}"
case "${1:-}" in
  --reset) mkdir -p "$(dirname "$file")"; : > "$file"; date +%s > "$file.start"; exit 0 ;;
  --report)
    [ -s "$file" ] || exit 0
    total=$(( $(date +%s) - $(cat "$file.start" 2> /dev/null || date +%s) ))
    echo "stages (seconds, in the order they ended; runs and builds overlap where they may):"
    awk -F'\t' '{ printf "  %-44s %6d%s\n", $1, $2, ($3 == 0 ? "" : "  (failed)") }' "$file"
    printf "  %-44s %6d\n" "wall clock, all stages" "$total"
    exit 0 ;;
esac
name="${1:?usage: stage.sh NAME CMD...}"; shift
start=$(date +%s)
"$@"
status=$?
mkdir -p "$(dirname "$file")"
printf '%s\t%d\t%d\n' "$name" "$(( $(date +%s) - start ))" "$status" >> "$file"
exit $status
