#!/bin/bash
# Build an image equivalent to the official postgres:<major> from Debian's
# packages, without a container registry: mmdebstrap -> tar -> docker import.
# Usage: images/build.sh MAJOR   (idempotent: does nothing if the tag exists)
set -euo pipefail

major="${1:?usage: build.sh MAJOR}"
case "$major" in
  13) suite=bullseye ;;
  15) suite=bookworm ;;
  17) suite=trixie ;;
  18) suite=sid ;;
  *) echo "build.sh: no Debian suite packages PostgreSQL $major (have 13, 15, 17, 18)" >&2; exit 2 ;;
esac
tag="repro-postgres:$major"
if docker image inspect "$tag" > /dev/null 2>&1; then
  echo "$tag: present"
  exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
echo "$tag: building from Debian $suite packages"
start=$(date +%s)
tarball=$(mktemp --suffix=.tar)
trap 'rm -f "$tarball"' EXIT
# Check-Valid-Until off: the mirror may be a dated snapshot whose sid Release has expired.
mmdebstrap --quiet --variant=apt --format=tar \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --include="postgresql-$major,postgresql-client-$major,postgresql-$major-pg-wait-sampling,ca-certificates" \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.d/no-main.conf"' \
  --customize-hook="upload '$here/docker-entrypoint.sh' /usr/local/bin/docker-entrypoint.sh" \
  --customize-hook="chroot \"\$1\" sh -c 'install -d -o postgres -g postgres /usr/share/repro && runuser -u postgres -- /usr/lib/postgresql/$major/bin/initdb -D /usr/share/repro/pgdata-template --username=postgres --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 --no-sync > /dev/null'" \
  --customize-hook='chmod 755 "$1/usr/local/bin/docker-entrypoint.sh"; rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  "$suite" "$tarball" "$mirror"
docker import \
  --change "ENV PG_MAJOR=$major" \
  --change "ENV PATH=/usr/lib/postgresql/$major/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change 'ENV PGDATA=/var/lib/postgresql/data' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
  --change 'CMD ["postgres"]' \
  --change 'EXPOSE 5432' \
  --message "offline equivalent of the official postgres:$major, from Debian $suite" \
  "$tarball" "$tag" > /dev/null
echo "$tag: built in $(( $(date +%s) - start )) s ($(docker image inspect -f '{{.Id}}' "$tag"))"
