#!/usr/bin/env bash
# Run a command that measures nothing but takes CPUs (a site build, an image build, a browser
# check) aside of the chapters' measuring runs: it holds this Docker engine's run lock
# (repro/lab/runlock.py) shared, so it waits while a chapter measures, and no chapter starts
# measuring until it ends; any number of such commands may run side by side. With no engine
# reachable it holds this machine's lock, which runs on local clusters take (--server local).
# Usage: scripts/aside.sh CMD [ARGS...]
set -euo pipefail
id=$(docker info -f '{{.ID}}' 2> /dev/null | tr -d ':' | cut -c1-12 || true)
id=${id:-this-machine}
exec 9>> "${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/repro-run-$id.lock"
if ! flock --shared --nonblock 9; then  # a stage's time then holds this wait: say how long
  start=$(date +%s)
  flock --shared 9
  echo "aside: waited $(( $(date +%s) - start )) s for a measuring run before: $*" >&2
fi
exec "$@"
