#!/usr/bin/env bash
# Make repro-semaphores:sysv and repro-semaphores:posix, the semaphore control of the
# chapter semaphores: Debian's source package of PostgreSQL MAJOR (fetched with
# `apt-get source`, see Dockerfile.build), built twice
# from the same source, System V against unnamed POSIX semaphores (Dockerfile.build), each
# build put into an image of its own (Dockerfile). Does nothing for images made by the
# current recipe (their io.repro.image.recipe label). Leaves no build image behind, nor
# the images a rebuild replaces.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
HERE="$IMAGES_DIR/semaphores"
MAJOR=15  # a major Debian ships (bookworm), whose image here is Debian's own packages
base="repro-postgres:$MAJOR"
build="repro-semaphores-build:$MAJOR"

base_id=$(docker image inspect -f '{{.Id}}' "$base" 2> /dev/null) \
  || { echo "error: $base is missing: run images/ensure.sh $MAJOR first" >&2; exit 1; }
recipe=$( { sha256 "$HERE/Dockerfile"; sha256 "$HERE/Dockerfile.build"; sha256 "$HERE/ensure.sh"
            echo "$base_id"; } | sha256sum | cut -c1-16)
missing=""
for kind in sysv posix; do
  [ "$(label "repro-semaphores:$kind" recipe || true)" = "$recipe" ] || missing="$missing $kind"
done
if [ -z "$missing" ]; then
  echo "repro-semaphores:sysv, :posix: present ($(label repro-semaphores:sysv source), recipe $recipe)"
  exit 0
fi
mkdir -p "$CACHE_DIR/logs"
log="$CACHE_DIR/logs/semaphores.log"
: > "$log"
context=$(mktemp -d)
cleanup() {
  rm -rf "$context"
  docker rmi "$build" > /dev/null 2>&1 || true
  local id dangling  # layers a failed build left: the dangling ones the log names
  dangling=$(docker images -q --filter dangling=true)
  for id in $(sed -nE 's/^ ---> ([0-9a-f]{12})$/\1/p' "$log" | sort -u); do
    if grep -qx "$id" <<< "$dangling"; then docker rmi "$id" > /dev/null 2>&1 || true; fi
  done
}
trap cleanup EXIT
fail() {
  if grep -qiE 'hash sum mismatch|checksum|does not match' "$log"; then
    echo "error: Debian's source package of postgresql-$MAJOR failed its checksum (see $log)" >&2
  else
    echo "error: $1 (the log's end follows; full log: $log)" >&2
    tail -n 20 "$log" >&2
  fi
  exit 1
}

echo "repro-semaphores: building Debian's postgresql-$MAJOR source twice, System V and POSIX (about 3 minutes on 2 cores)"
cp "$HERE/Dockerfile.build" "$context/"
docker build --rm --force-rm -f "$context/Dockerfile.build" --build-arg BASE="$base" \
  --build-arg MAJOR="$MAJOR" -t "$build" "$context" >> "$log" 2>&1 || fail "the build stage failed"
source=$(docker run --rm --entrypoint cat "$build" /out/source)  # "postgresql-15 15.18-0+deb12u1"
for kind in $missing; do
  case "$kind" in sysv) api=SYSV ;; posix) api=UNNAMED_POSIX ;; esac
  rm -rf "$context/final" && mkdir -p "$context/final"
  cp "$HERE/Dockerfile" "$context/final/"
  docker run --rm --entrypoint tar "$build" -C "/out/$api" -cf - . > "$context/final/server.tar"
  old=$(docker image inspect -f '{{.Id}}' "repro-semaphores:$kind" 2> /dev/null || true)
  docker build --rm --force-rm --build-arg BASE="$base" --build-arg MAJOR="$MAJOR" \
    --label io.repro.image.origin="debian-source-$kind" --label io.repro.image.recipe="$recipe" \
    --label io.repro.image.source="$source (Debian source package)" \
    --label io.repro.image.version="$(docker run --rm --entrypoint sh "$build" -c \
        "/out/$api/usr/lib/postgresql/$MAJOR/bin/postgres --version" | awk '{print $3}')" \
    --label io.repro.image.features="strace,procps" --label io.repro.image.semaphores="$api" \
    -t "repro-semaphores:$kind" "$context/final" >> "$log" 2>&1 || fail "repro-semaphores:$kind did not build"
  # the image this one replaces (an older recipe's) would be left dangling: remove it
  if [ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "repro-semaphores:$kind")" ]; then
    docker rmi "$old" > /dev/null 2>&1 || true
  fi
  echo "repro-semaphores:$kind: $source, PREFERRED_SEMAPHORES=$api"
done
