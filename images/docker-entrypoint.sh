#!/usr/bin/env bash
# Entrypoint compatible with the official postgres image's interface:
# POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB / POSTGRES_INITDB_ARGS /
# POSTGRES_INITDB_WALDIR / POSTGRES_HOST_AUTH_METHOD (and their *_FILE forms),
# "postgres -c key=value" arguments, a new cluster (UTF8, C.UTF-8 locale) on first
# start, then the scripts in /docker-entrypoint-initdb.d (*.sh run if executable,
# sourced otherwise; *.sql, *.sql.gz, *.sql.xz, *.sql.zst through psql) against a
# temporary server that listens only on the Unix socket.
#
# Speed: initdb takes ~1.7 s on 2 cores, so the image carries a cluster that initdb
# made at build time with the default options; a first start with the default
# superuser (postgres), the default host authentication and no initdb arguments
# copies it instead. Without init scripts the password and database are then set
# in single-user mode, without starting a temporary server.
#
# A data directory that already has PG_VERSION (a standby's pg_basebackup, a
# restarted container) is started as it is.
set -Eeo pipefail

: "${PG_MAJOR:?PG_MAJOR is not set}"
export PATH="/usr/lib/postgresql/$PG_MAJOR/bin:$PATH"
TEMPLATE=/usr/share/repro/pgdata-template
SOCKET_DIR=/var/run/postgresql
INITDB_D=/docker-entrypoint-initdb.d
: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA

# VAR or VAR_FILE (a file holding the value, e.g. a Docker secret), not both.
file_env() {
  local var="$1" def="${2:-}" fvar="${1}_FILE" val
  if [ -n "${!var:-}" ] && [ -n "${!fvar:-}" ]; then
    echo "error: both $var and $fvar are set (but are exclusive)" >&2
    exit 1
  fi
  val="$def"
  if [ -n "${!var:-}" ]; then
    val="${!var}"
  elif [ -n "${!fvar:-}" ]; then
    val="$(< "${!fvar}")"
  fi
  export "$var"="$val"
  unset "$fvar"
}

# scram-sha-256 where the server has it (10 and later), md5 before.
default_auth() {
  case "$PG_MAJOR" in
    9.*) echo md5 ;;
    *) echo scram-sha-256 ;;
  esac
}

sql_literal() { local s=${1//\'/\'\'}; printf "'%s'" "$s"; }
sql_ident() { local s=${1//\"/\"\"}; printf '"%s"' "$s"; }

# psql against the temporary server; extra arguments follow.
docker_process_sql() {
  local query_runner=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc
                      --host "$SOCKET_DIR" --port "${PGPORT:-5432}")
  if [ -n "${POSTGRES_DB:-}" ]; then
    query_runner+=(--dbname "$POSTGRES_DB")
  fi
  PGHOST= PGHOSTADDR= "${query_runner[@]}" "$@"
}

docker_process_init_files() {
  local f
  echo
  for f; do
    case "$f" in
      *.sh)
        if [ -x "$f" ]; then
          echo "$0: running $f"
          "$f"
        else
          echo "$0: sourcing $f"
          . "$f"
        fi
        ;;
      *.sql) echo "$0: running $f"; docker_process_sql -f "$f"; echo ;;
      *.sql.gz) echo "$0: running $f"; gunzip -c "$f" | docker_process_sql; echo ;;
      *.sql.xz) echo "$0: running $f"; xzcat "$f" | docker_process_sql; echo ;;
      *.sql.zst) echo "$0: running $f"; zstd -dc "$f" | docker_process_sql; echo ;;
      *) echo "$0: ignoring $f" ;;
    esac
    echo
  done
}

docker_temp_server_start() {
  PGUSER="${PGUSER:-$POSTGRES_USER}" pg_ctl -D "$PGDATA" -w start \
    -o "-c listen_addresses='' -c unix_socket_directories=$SOCKET_DIR -p ${PGPORT:-5432}"
}

docker_temp_server_stop() {
  PGUSER="${PGUSER:-postgres}" pg_ctl -D "$PGDATA" -m fast -w stop
}

# The first start's cluster: the build-time template when the options are the defaults,
# else initdb with the caller's options.
init_cluster() {
  if [ "$POSTGRES_USER" = postgres ] && [ -z "$POSTGRES_INITDB_ARGS" ] \
     && [ -z "${POSTGRES_INITDB_WALDIR:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" = "$(default_auth)" ] \
     && [ -d "$TEMPLATE" ]; then
    cp -a "$TEMPLATE/." "$PGDATA/"
  else
    local extra=()
    if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
      case "$PG_MAJOR" in
        9.*) extra+=(--xlogdir "$POSTGRES_INITDB_WALDIR") ;;
        *) extra+=(--waldir "$POSTGRES_INITDB_WALDIR") ;;
      esac
    fi
    # POSTGRES_INITDB_ARGS is split into words, as the official image does.
    # shellcheck disable=SC2086
    initdb -D "$PGDATA" --username="$POSTGRES_USER" --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host="$POSTGRES_HOST_AUTH_METHOD" -N "${extra[@]}" \
      $POSTGRES_INITDB_ARGS > /dev/null
  fi
  {
    echo
    echo "listen_addresses = '*'"
    echo "unix_socket_directories = '$SOCKET_DIR'"
  } >> "$PGDATA/postgresql.conf"
  printf '\nhost all all all %s\nhost replication all all %s\n' \
    "$POSTGRES_HOST_AUTH_METHOD" "$POSTGRES_HOST_AUTH_METHOD" >> "$PGDATA/pg_hba.conf"
}

# The superuser's password and POSTGRES_DB, as SQL statements.
setup_sql() {
  if [ -n "$POSTGRES_PASSWORD" ]; then
    printf 'ALTER ROLE %s PASSWORD %s;\n\n' "$(sql_ident "$POSTGRES_USER")" "$(sql_literal "$POSTGRES_PASSWORD")"
  fi
  if [ "$POSTGRES_DB" != postgres ]; then
    printf 'CREATE DATABASE %s;\n\n' "$(sql_ident "$POSTGRES_DB")"
  fi
}

# A standby's primary_conninfo, written by pg_basebackup -R of the image's client tools
# (15 or 17 next to zonky's 9.6 to 16), may name options the server's own libpq (the one
# its walreceiver loads, zonky's bundled copy of the server's major) does not know, such
# as channel_binding before 13 or sslsni before 14: the walreceiver would never connect
# ("invalid connection option"). Drop those. (Debian's servers load the system's libpq,
# as new as their client tools: nothing to do there.)
fit_primary_conninfo() {
  local conf walrcv libpq major entry kw
  walrcv=
  for walrcv in /usr/lib/postgresql/"$PG_MAJOR"/lib/{,postgresql/}libpqwalreceiver.so; do
    [ -f "$walrcv" ] && break
  done
  libpq=$(ldd "$walrcv" 2> /dev/null | awk '$1 == "libpq.so.5" { print $3 }' || true)
  case "$libpq" in
    /usr/lib/postgresql/*) ;;
    *) return 0 ;;
  esac
  major=${PG_MAJOR%%.*}
  for conf in "$PGDATA/recovery.conf" "$PGDATA/postgresql.auto.conf"; do
    [ -w "$conf" ] && grep -q "^primary_conninfo *= *'" "$conf" || continue
    # keyword:the first libpq major that knows it
    for entry in target_session_attrs:10 gssencmode:12 channel_binding:13 sslpassword:13 \
                 ssl_min_protocol_version:13 ssl_max_protocol_version:13 sslsni:14 sslcrldir:14 \
                 sslcertmode:16 require_auth:16 load_balance_hosts:16 gssdelegation:16 \
                 sslnegotiation:17 min_protocol_version:18 max_protocol_version:18 sslkeylogfile:18; do
      kw=${entry%:*}
      if [ "$major" -lt "${entry#*:}" ]; then
        sed -i -E "/^primary_conninfo/ s/ $kw=[^ ']*//g" "$conf"
      fi
    done
    # krbsrvname exists only in a libpq built with GSSAPI
    if [ "$(tr '\0' '\n' < "$libpq" | grep -cxF krbsrvname || true)" = 0 ]; then
      sed -i -E "/^primary_conninfo/ s/ krbsrvname=[^ ']*//g" "$conf"
    fi
  done
}

# "docker run image -c foo=bar" means "postgres -c foo=bar".
if [ "${1:0:1}" = '-' ]; then
  set -- postgres "$@"
fi
[ $# -gt 0 ] || set -- postgres

if [ "$1" != postgres ]; then
  exec "$@"
fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" "$SOCKET_DIR"
  chmod 00700 "$PGDATA" || :
  chown postgres:postgres "$SOCKET_DIR"
  chmod 03777 "$SOCKET_DIR"
  find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  file_env POSTGRES_PASSWORD
  file_env POSTGRES_USER postgres
  file_env POSTGRES_DB "$POSTGRES_USER"
  file_env POSTGRES_INITDB_ARGS
  : "${POSTGRES_HOST_AUTH_METHOD:=$(default_auth)}"
  if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    cat >&2 <<'EOE'
Error: Database is uninitialized and superuser password is not specified.
       You must specify POSTGRES_PASSWORD to a non-empty value for the
       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".

       You may also use "POSTGRES_HOST_AUTH_METHOD=trust" to allow all
       connections without a password. This is *not* recommended.
EOE
    exit 1
  fi

  init_cluster
  shopt -s nullglob
  init_files=("$INITDB_D"/*)
  shopt -u nullglob
  if [ ${#init_files[@]} -eq 0 ]; then
    setup_sql | postgres --single -F -j -D "$PGDATA" postgres > /dev/null
  else
    export PGPASSWORD="${PGPASSWORD:-$POSTGRES_PASSWORD}"
    docker_temp_server_start
    # CREATE DATABASE cannot run in the transaction a multi-statement -c would make.
    setup_sql | POSTGRES_DB=postgres docker_process_sql --quiet > /dev/null
    docker_process_init_files "${init_files[@]}"
    docker_temp_server_stop
    unset PGPASSWORD
  fi
  echo
  echo "PostgreSQL init process complete; ready for start up."
  echo
else
  fit_primary_conninfo
fi

exec "$@"
