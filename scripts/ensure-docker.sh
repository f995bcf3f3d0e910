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
echo "starting dockerd (log: /var/log/repro-dockerd.log)"
setsid -f dockerd -H unix:///var/run/docker.sock > /var/log/repro-dockerd.log 2>&1 < /dev/null
for _ in $(seq 60); do
  docker info > /dev/null 2>&1 && exit 0
  sleep 0.5
done
echo "error: dockerd did not come up; see /var/log/repro-dockerd.log" >&2
exit 1
