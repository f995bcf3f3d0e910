#!/usr/bin/env bash
# Make repro-postgres:MAJOR available (MAJOR: 9.6, 10, 11, 12, 13, 14, 15, 16, 17, 18).
# Does nothing if the image exists and was made by the current recipe (its
# io.repro.image.recipe label); otherwise builds it with images/build.sh: the official
# postgres:MAJOR plus a layer where a registry answers, else offline (Debian packages or
# zonky's binaries, see build.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
major="${1:?usage: ensure.sh MAJOR}"
valid_major "$major" || { echo "ensure.sh: PostgreSQL $major is not one of: $MAJORS" >&2; exit 2; }
tag="repro-postgres:$major"
recipe=$(recipe_hash)
have=$(label "$tag" recipe || true)
if [ "$have" = "$recipe" ]; then
  echo "$tag: present (PostgreSQL $(label "$tag" version), $(label "$tag" origin), recipe $recipe)"
  exit 0
fi
if [ -n "$have" ]; then
  echo "$tag: made by recipe $have, the current one is $recipe: rebuilding"
elif docker image inspect "$tag" > /dev/null 2>&1; then
  echo "$tag: present but without a recipe label: rebuilding"
fi
exec "$IMAGES_DIR/build.sh" "$major"
