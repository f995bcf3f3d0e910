#!/usr/bin/env bash
# Make postgres:MAJOR available: the official image if present or pullable,
# else the offline equivalent repro-postgres:MAJOR built from Debian's packages.
set -euo pipefail
major="${1:?usage: ensure.sh MAJOR}"
for tag in "postgres:$major" "repro-postgres:$major"; do
  if docker image inspect "$tag" > /dev/null 2>&1; then
    echo "$tag: present"
    exit 0
  fi
done
if timeout 120 docker pull -q "postgres:$major" > /dev/null 2>&1; then
  echo "postgres:$major: pulled"
  exit 0
fi
echo "postgres:$major: no registry answered; building the offline equivalent"
exec "$(dirname "$0")/build.sh" "$major"
