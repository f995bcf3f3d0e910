#!/bin/sh
# Entrypoint compatible with the official postgres image's interface:
# POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB / POSTGRES_INITDB_ARGS /
# POSTGRES_HOST_AUTH_METHOD, "postgres -c key=value" arguments, a new cluster
# (UTF8, C.UTF-8 locale) on first start.
#
# Speed: initdb takes ~1.7 s on 2 cores, so the image carries a cluster that
# initdb made at build time with the default options; a first start with the
# default superuser (postgres) and no POSTGRES_INITDB_ARGS copies it instead.
set -eu

PGBIN="/usr/lib/postgresql/$PG_MAJOR/bin"
export PATH="$PGBIN:$PATH"
TEMPLATE=/usr/share/repro/pgdata-template
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"

# "docker run image -c foo=bar" means "postgres -c foo=bar".
case "${1:-postgres}" in
  -*) set -- postgres "$@" ;;
esac
[ $# -gt 0 ] || set -- postgres

if [ "$1" != postgres ]; then
  exec "$@"
fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

sql_literal() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }
sql_ident() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    echo "error: POSTGRES_PASSWORD is not set (or set POSTGRES_HOST_AUTH_METHOD=trust)" >&2
    exit 1
  fi
  if [ "$POSTGRES_USER" = postgres ] && [ -z "${POSTGRES_INITDB_ARGS:-}" ] && [ -d "$TEMPLATE" ]; then
    cp -a "$TEMPLATE/." "$PGDATA/"
  else
    initdb -D "$PGDATA" --username="$POSTGRES_USER" --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host="$POSTGRES_HOST_AUTH_METHOD" --no-sync \
      ${POSTGRES_INITDB_ARGS:-} > /dev/null
  fi
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  printf 'host all all all %s\nhost replication all all %s\n' \
    "$POSTGRES_HOST_AUTH_METHOD" "$POSTGRES_HOST_AUTH_METHOD" >> "$PGDATA/pg_hba.conf"
  {
    printf 'ALTER ROLE %s PASSWORD %s;\n\n' "$(sql_ident "$POSTGRES_USER")" "$(sql_literal "${POSTGRES_PASSWORD:-}")"
    if [ "$POSTGRES_DB" != postgres ]; then
      printf 'CREATE DATABASE %s;\n\n' "$(sql_ident "$POSTGRES_DB")"
    fi
  } | postgres --single -F -j -D "$PGDATA" postgres > /dev/null
  echo "PostgreSQL init process complete; ready for start up."
fi

exec "$@"
