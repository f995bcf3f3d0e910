#!/usr/bin/env bash
# Make repro-debian:SUITE-RECIPE, the base of every offline image on a Debian suite
# (bullseye 13, bookworm 15 and the zonky majors that use its client tools, trixie 17 and
# 16, sid 18): one mmdebstrap root per suite and recipe, imported once, so the images on
# it share its layers. Does nothing if it exists. Two builds that need the same base wait
# for one another (flock), and the first one makes it. Bases of older recipes are removed,
# unless an image still uses them.
#
# The root holds the Debian packages of every major the suite serves (images/lib.sh
# suite_packages), the tools the chapters and the probe use (procps, strace, util-linux),
# and on trixie bookworm's libunwind8 as a file, /var/cache/repro/libunwind8_*.deb, which
# 16's layer installs (see images/Dockerfile). Nothing in it names a major's image: each
# major's layer (images/Dockerfile) adds the entrypoint, zonky's server where it is one,
# and the template cluster.
# Usage: images/base.sh SUITE
{  # (braces: bash reads the whole script before running it)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

suite="${1:?usage: base.sh SUITE}"
packages=$(suite_packages "$suite") \
  || { echo "base.sh: no offline image builds on Debian $suite" >&2; exit 2; }
tag=$(base_tag "$suite")
mkdir -p "$CACHE_DIR/logs"
exec 9> "$CACHE_DIR/base-$suite.lock"
flock 9
if docker image inspect "$tag" > /dev/null 2>&1; then
  exit 0
fi
start=$(date +%s)
log="$CACHE_DIR/logs/base-$suite.log"
: > "$log"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$tag: building the root of Debian $suite with mmdebstrap"

run() {  # a command whose output goes to the log; the log's end is shown if it fails
  if ! "$@" >> "$log" 2>&1; then
    echo "$tag: failed: $*" >&2
    tail -n 30 "$log" >&2
    echo "(full log: $log)" >&2
    exit 1
  fi
}

debian_mirrors
sources=("deb $DEBIAN_MIRROR $suite main")
if [ "$suite" != sid ]; then
  sources+=("deb $DEBIAN_MIRROR $suite-updates main"
            "deb $DEBIAN_SECURITY_MIRROR $suite-security main")
fi
# On trixie, libunwind8 1.8.1 segfaults strace -k at a backend's first system call,
# unwinding through zonky's bundled libcrypto.so.1.1 (16); bookworm's 1.6.2 unwinds it.
# bookworm is an apt source only while its package downloads (as a source of the whole
# run, its Essential packages would join the root).
unwind_hook=true
if [ "$suite" = trixie ]; then
  echo "deb $DEBIAN_MIRROR bookworm main" > "$work/unwind.list"
  unwind_hook="cp '$work/unwind.list' \"\$1/etc/apt/sources.list.d/\" &&
    chroot \"\$1\" apt-get -q update && mkdir -p \"\$1/var/cache/repro\" &&
    chroot \"\$1\" sh -c 'cd /var/cache/repro && apt-get -q -o APT::Sandbox::User=root download libunwind8/bookworm' &&
    rm \"\$1/etc/apt/sources.list.d/unwind.list\""
fi
# Check-Valid-Until off: the mirror may be a dated snapshot whose Release has expired.
run mmdebstrap --quiet --variant=apt --format=tar \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --include="$packages,ca-certificates,procps,strace,util-linux,gzip,xz-utils" \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.d/no-main.conf"' \
  --customize-hook="$unwind_hook" \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  "$suite" "$work/rootfs.tar" "${sources[@]}"
run docker import --change 'ENV LANG=C.UTF-8' --message "base of the offline images on Debian $suite" \
  "$work/rootfs.tar" "$tag"
prune_bases
seconds=$(( $(date +%s) - start ))
printf '%s\tbase %s\t\tdebian-%s\t\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$suite" "$suite" "$seconds" \
  >> "$CACHE_DIR/build-times.tsv"
echo "$tag: built in $seconds s"
exit 0
}
