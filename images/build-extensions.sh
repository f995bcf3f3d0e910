#!/usr/bin/env bash
# Runs in the build stage (images/Dockerfile.extensions), FROM the image being made:
# builds pg_bigm (PGXS) and, where the suite's Groonga is new enough (14.1+), PGroonga
# (meson) against this image's PostgreSQL ($PG_MAJOR), and installs them under /out.
# /out/usr/share/repro/extensions lists what was built ("name release" lines);
# /out/usr/share/repro/runtime-packages the Debian packages the built libraries need
# that the image does not have yet (the final image installs them). An extension that
# cannot be built here is left out with a warning; the image's features label, which
# images/probe.sh reads from the finished image, says what works.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
: "${PG_MAJOR:?}"
pg_config=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
jobs=$(nproc)
meta=/out/usr/share/repro
mkdir -p "$meta" /build
: > "$meta/extensions"
: > "$meta/runtime-packages"

dpkg-query -W -f '${Package}\n' | sort -u > /build/base-packages
apt_install() { apt-get install -y -qq --no-install-recommends "$@" > /dev/null; }
apt-get update -qq
# The server headers: the candidate version, else another one the archive has (a mirror
# may lack the newest security build's -dev package; the ABI is stable within a major).
dev="postgresql-server-dev-$PG_MAJOR"
if ! apt_install build-essential "$dev" libicu-dev pkg-config; then
  installed=no
  for v in $(apt-cache madison "$dev" | awk -F' *[|] *' '{ print $2 }'); do
    echo "warning: $dev could not be installed; trying $dev=$v" >&2
    if apt_install build-essential "$dev=$v" libicu-dev pkg-config; then installed=yes; break; fi
  done
  [ "$installed" = yes ] || { echo "error: no $dev could be installed" >&2; exit 1; }
fi

unpack() {  # NAME: /src/NAME.tar.gz into /build/NAME; prints the release (from the top folder)
  local top
  top=$(tar -tzf "/src/$1.tar.gz" | head -n 1)
  top=${top%%/*}
  mkdir -p "/build/$1"
  tar -C "/build/$1" --strip-components=1 -xzf "/src/$1.tar.gz"
  echo "${top#"$1"-}"
}

if [ -f /src/pg_bigm.tar.gz ]; then
  release=$(unpack pg_bigm)
  if make -C /build/pg_bigm -s USE_PGXS=1 PG_CONFIG="$pg_config" -j"$jobs" > /build/pg_bigm.log 2>&1 \
     && make -C /build/pg_bigm -s USE_PGXS=1 PG_CONFIG="$pg_config" DESTDIR=/out install >> /build/pg_bigm.log 2>&1; then
    echo "pg_bigm $release" >> "$meta/extensions"
  else
    tail -n 20 /build/pg_bigm.log >&2
    echo "WARNING: pg_bigm did not build for PostgreSQL $PG_MAJOR" >&2
  fi
fi

groonga=$(apt-cache policy libgroonga-dev 2>/dev/null | sed -n 's/^ *Candidate: //p')
if [ ! -f /src/pgroonga.tar.gz ]; then
  :
elif [ -z "$groonga" ] || [ "$groonga" = "(none)" ] || dpkg --compare-versions "$groonga" lt 14.1; then
  echo "note: PGroonga 4 needs Groonga 14.1 or newer; this suite has ${groonga:-none}: not built" >&2
else
  release=$(unpack pgroonga)
  apt_install meson ninja-build libgroonga-dev libxxhash-dev
  if (cd /build/pgroonga \
      && meson setup build --buildtype=release -Dmessage_pack=disabled -Dtest=false \
           -Dpg_config="$pg_config" \
      && ninja -C build -j"$jobs" \
      && DESTDIR=/out ninja -C build install) > /build/pgroonga.log 2>&1; then
    echo "pgroonga $release" >> "$meta/extensions"
  else
    tail -n 30 /build/pgroonga.log >&2
    echo "WARNING: PGroonga did not build for PostgreSQL $PG_MAJOR" >&2
  fi
fi

# Runtime libraries of what was built: the packages owning them, minus those the image has.
find /out -name '*.so*' -type f -print0 | xargs -0 -r ldd 2>/dev/null \
  | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u \
  | while read -r lib; do
      dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
    done | cut -d: -f1 | sort -u | comm -23 - /build/base-packages > "$meta/runtime-packages"

echo "built: $(tr '\n' ' ' < "$meta/extensions")"
echo "runtime packages: $(tr '\n' ' ' < "$meta/runtime-packages")"
