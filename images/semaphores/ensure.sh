#!/usr/bin/env bash
# Make repro-semaphores:sysv and repro-semaphores:posix (images/semaphores/Dockerfile):
# PostgreSQL 16.9 built twice from the same source, System V against unnamed POSIX
# semaphores. Does nothing for an image made by the current recipe (its
# io.repro.image.recipe label). The source is the Go module proxy's zip of the REL_16_9
# commit (the project's GitHub mirror), downloaded once into the cache, sha256 pinned.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
HERE="$IMAGES_DIR/semaphores"
VERSION=16.9
COMMIT=6e4ab1b69197  # REL_16_9, "Stamp 16.9."
ZIP_URL=https://proxy.golang.org/github.com/postgres/postgres/@v/v0.0.0-20250505203008-$COMMIT.zip
ZIP_SHA256=ba802511eb34a99d8449fc46d512f34f2b1273324dad4a8e2ca2954630ceb246
zip="$CACHE_DIR/sources/postgres-$VERSION.zip"

recipe=$( { sha256 "$HERE/Dockerfile"; sha256 "$HERE/ensure.sh"; echo "$ZIP_SHA256";
            docker image inspect -f '{{.Id}}' repro-postgres:16; } | sha256sum | cut -c1-16)
missing=""
for kind in sysv posix; do
  [ "$(label "repro-semaphores:$kind" recipe || true)" = "$recipe" ] || missing="$missing $kind"
done
if [ -z "$missing" ]; then
  echo "repro-semaphores:sysv, :posix: present (PostgreSQL $VERSION from source, recipe $recipe)"
  exit 0
fi
if [ ! -s "$zip" ]; then
  mkdir -p "$(dirname "$zip")"
  echo "downloading $ZIP_URL" >&2
  curl -fsSL --retry 3 -o "$zip.part" "$ZIP_URL"
  mv "$zip.part" "$zip"
fi
[ "$(sha256 "$zip")" = "$ZIP_SHA256" ] || { echo "error: $zip is not the pinned source (sha256)" >&2; exit 1; }
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$HERE/Dockerfile" "$context/" && cp "$zip" "$context/postgres.zip"
for kind in $missing; do
  case "$kind" in sysv) api=SYSV ;; posix) api=UNNAMED_POSIX ;; esac
  echo "repro-semaphores:$kind: building PostgreSQL $VERSION with PREFERRED_SEMAPHORES=$api (about 2 minutes)"
  docker build --force-rm --build-arg SEMAPHORES="$api" -t "repro-semaphores:$kind" \
    --label io.repro.image.origin="source-$VERSION-$kind" --label io.repro.image.recipe="$recipe" \
    --label io.repro.image.version="$VERSION" --label io.repro.image.features="strace,procps" \
    --label io.repro.image.semaphores="$api" "$context" > "$CACHE_DIR/semaphores-$kind.log" || { tail -n 30 "$CACHE_DIR/semaphores-$kind.log" >&2; exit 1; }
done
