#!/usr/bin/env bash
# The client programs that zonky's relocatable servers lack (pgbench, psql, pg_basebackup,
# pg_test_fsync, pg_test_timing, and their libpq), of MAJOR, compiled from Debian's source
# package into TARGET, for local clusters (--server local) on a machine with no PostgreSQL
# of that major installed. Run by scripts/binaries.py (`make binaries`).
# The source comes with `apt-get source`, which checks it against the suite's signed index:
# the suite images/lib.sh takes MAJOR's packages from, on the machine's own mirror
# (debian_mirrors). apt's lists and downloads stay in a directory of this run's own: the
# machine's apt sources are not touched. Only what a local lab runs is compiled (about 30 s
# on 2 cores), without readline, ICU or zlib. TARGET is made whole or not at all; its
# .source names the package and version.
# Usage: scripts/client-programs.sh MAJOR TARGET
{  # (braces: bash reads the whole script before running it)
set -euo pipefail
. "$(dirname "$0")/../images/lib.sh"

major="${1:?usage: client-programs.sh MAJOR TARGET}"
target="${2:?usage: client-programs.sh MAJOR TARGET}"
suite=$(debian_suite "$major") || { echo "error: no Debian suite here serves postgresql-$major" >&2; exit 2; }
for tool in gcc make bison flex perl dpkg-source; do
  command -v "$tool" > /dev/null || { echo "error: $tool is missing: run \`make system\`" >&2; exit 1; }
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "error: $keyring is missing: install debian-archive-keyring" >&2; exit 1; }
debian_mirrors 2> /dev/null || [ -n "$DEBIAN_MIRROR" ] \
  || { echo "error: no Debian mirror in this machine's apt sources; set DEBIAN_MIRROR" >&2; exit 1; }
work=$(mktemp -d)
part=""
trap 'rm -rf "$work" ${part:+"$part"}' EXIT
log="$work/log"
run() {  # a command whose output goes to the log; the log's end is shown if it fails
  if ! "$@" >> "$log" 2>&1; then
    echo "error: building PostgreSQL $major's client programs failed: $*" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}
mkdir -p "$work/lists/partial" "$work/apt" "$work/src" "$work/build"
echo "deb-src [signed-by=$keyring] $DEBIAN_MIRROR $suite main" \
  > "$work/sources.list"
apt=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/nonexistent
     -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/apt" -o APT::Sandbox::User="$(id -un)"
     -o Acquire::Check-Valid-Until=false)  # the mirror may be a dated snapshot
run apt-get -q "${apt[@]}" update
(cd "$work/src" && run apt-get -q "${apt[@]}" source "postgresql-$major")
version=$(cd "$work/src" && ls postgresql-"$major"_*.dsc | sed 's/^[^_]*_\(.*\)\.dsc$/\1/')
echo "PostgreSQL $major's client programs: compiling Debian's postgresql-$major $version"
cd "$work/build"
run "$work"/src/postgresql-"$major"-*/configure --prefix="$target" --without-readline --without-icu --without-zlib
programs=(src/interfaces/libpq src/bin/psql src/bin/pgbench src/bin/pg_basebackup src/bin/pg_test_fsync
          src/bin/pg_test_timing)
run make -C src/backend generated-headers  # before any program: a parallel make of one may not wait for them
for dir in "${programs[@]}"; do
  run make -j"$(nproc)" -C "$dir"
  run make -C "$dir" DESTDIR="$work/install" install
done
umask 022
echo "postgresql-$major $version" > "$work/install$target/.source"
chmod -R a+rX "$work/install$target"
mkdir -p "$(dirname "$target")"
part=$(mktemp -d "$(dirname "$target")/.client-XXXXXX")  # beside TARGET: the last step is a rename
cp -a "$work/install$target/." "$part"
chmod 755 "$part"
rm -rf "$target"
mv -T "$part" "$target"  # fails, rather than moving into a TARGET another run made meanwhile
exit 0
}
