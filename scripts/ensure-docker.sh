#!/usr/bin/env bash
# Make sure a Docker engine answers. Uses DOCKER_HOST or the local socket if one
# answers; otherwise, as root on Debian (starting it needs root), starts Debian's dockerd
# in the background, listening on its Unix socket only: no TCP port. It starts in a session of
# its own (setsid), so the end of the shell, job or CI step that started it does not end it.
set -euo pipefail
if docker info > /dev/null 2>&1; then
  exit 0
fi
if [ -n "${DOCKER_HOST:-}" ]; then
  echo "error: no Docker engine answers at DOCKER_HOST=$DOCKER_HOST" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ] || ! command -v dockerd > /dev/null; then
  echo "error: no Docker engine is running; start one (e.g. sudo systemctl start docker)," \
       "or run this as root on Debian with docker.io installed (make system)" >&2
  exit 1
fi
# A dockerd that is still starting, or still stopping its containers after it was told to end,
# holds /var/run/docker.pid, and a second one refuses to start while it lives: wait until it
# answers or is gone (seen when a CI started a moment after the last session's engine ended).
pidfile=/var/run/docker.pid
holder() {  # the live, not defunct, dockerd whose pid the file holds, if any
  local pid
  pid=$(cat "$pidfile" 2> /dev/null || true)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = dockerd ] \
    && ! grep -q '^State:.*zombie' "/proc/$pid/status" 2> /dev/null && echo "$pid"
}
if [ -f "$pidfile" ]; then
  for _ in $(seq 240); do
    docker info > /dev/null 2>&1 && exit 0
    # a live dockerd holds it, or one is writing it (the file is there, still empty)
    [ -n "$(holder)" ] || { [ -f "$pidfile" ] && [ ! -s "$pidfile" ]; } || break
    sleep 0.5
  done
  if held=$(holder); then
    echo "error: dockerd (pid $held) holds $pidfile but did not answer in 120 s;" \
         "end it, or see /var/log/repro-dockerd.log" >&2
    exit 1
  fi
  # Left by a dockerd that is gone; its number may now be another process's, which dockerd
  # would take for itself.
  rm -f "$pidfile"
fi
echo "starting dockerd (log: /var/log/repro-dockerd.log)"
setsid -f dockerd -H unix:///var/run/docker.sock > /var/log/repro-dockerd.log 2>&1 < /dev/null
for _ in $(seq 60); do
  docker info > /dev/null 2>&1 && exit 0
  sleep 0.5
done
echo "error: dockerd did not come up; see /var/log/repro-dockerd.log" >&2
exit 1
