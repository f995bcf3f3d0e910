#!/usr/bin/env bash
# What works in an image: starts it once (as a chapter would, through its entrypoint)
# and tries each feature the chapters may need. Prints two lines: the exact server
# version (postgres --version, checked against SELECT version()), then the features
# that worked, comma-separated, from: pg_wait_sampling, strace, procps, pg_bigm,
# pgroonga, jit, pg_walinspect. Removes its container whatever happens.
# Usage: images/probe.sh IMAGE
set -euo pipefail
image="${1:?usage: probe.sh IMAGE}"
password="probe-$$-$RANDOM"
cid=
trap '[ -z "$cid" ] || docker rm -f -v "$cid" > /dev/null 2>&1 || true' EXIT

has_wait_sampling=no
if docker run --rm --entrypoint sh "$image" -c \
     'test -f "/usr/lib/postgresql/$PG_MAJOR/lib/pg_wait_sampling.so"' > /dev/null 2>&1; then
  has_wait_sampling=yes
fi
args=(postgres)
[ "$has_wait_sampling" = no ] || args+=(-c shared_preload_libraries=pg_wait_sampling)
cid=$(docker run -d -e POSTGRES_PASSWORD="$password" "$image" "${args[@]}")

ready=no
for _ in $(seq 1 600); do  # up to 60 s; TCP answers only once the final server runs
  if docker exec -e PGPASSWORD="$password" "$cid" \
       psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'SELECT 1' > /dev/null 2>&1; then
    ready=yes
    break
  fi
  [ "$(docker inspect -f '{{.State.Running}}' "$cid")" = true ] || break
  sleep 0.1
done
if [ "$ready" = no ]; then
  echo "probe: $image did not start:" >&2
  docker logs --tail 20 "$cid" >&2 || true
  exit 1
fi

q() {
  docker exec -u postgres "$cid" psql -h /var/run/postgresql -U postgres -d postgres \
    -v ON_ERROR_STOP=1 -Atqc "$1" 2> /dev/null
}
x() { docker exec "$cid" sh -c "$1" > /dev/null 2>&1; }

version=$(docker exec "$cid" postgres --version | sed -nE 's/^postgres \(PostgreSQL\) ([0-9]+(\.[0-9]+)*).*/\1/p')
server=$(q 'SELECT version()')
case "$server" in
  "PostgreSQL $version "*|"PostgreSQL $version") ;;
  *) echo "probe: postgres --version says $version but the server says: $server" >&2; exit 1 ;;
esac

features=()
if [ "$has_wait_sampling" = yes ] \
   && [ "$(q 'CREATE EXTENSION pg_wait_sampling; SELECT count(*) >= 0 FROM pg_wait_sampling_profile')" = t ]; then
  features+=(pg_wait_sampling)
fi
# strace: it must unwind stacks (-k, as the semaphores chapter does) in a backend. Attached
# to the postmaster as its user (no CAP_SYS_PTRACE needed) while a connection runs a few
# statements, it must still run afterwards and have written stack frames (" > " lines):
# libunwind8 1.8.1 made it segfault at a backend's first system call in zonky's 16.
strace_unwinds() {
  local pid=
  x 'strace -V' || return 1
  docker exec -d -u postgres "$cid" sh -c \
    'exec strace -qq -f -k -e signal=none -o /tmp/probe-strace.txt -p "$(head -n 1 "$PGDATA/postmaster.pid")"' \
    || return 1
  for _ in $(seq 1 50); do  # up to 5 s for strace to attach
    pid=$(docker exec "$cid" sh -c 'grep -s "^TracerPid:" "/proc/$(head -n 1 "$PGDATA/postmaster.pid")/status"' \
          | awk '$2 != 0 { print $2 }') || true
    [ -z "$pid" ] || break
    sleep 0.1
  done
  [ -n "$pid" ] || return 1
  q 'CREATE TABLE probe_strace (i int); INSERT INTO probe_strace SELECT generate_series(1, 100);
     SELECT count(*) FROM probe_strace; DROP TABLE probe_strace' > /dev/null || return 1
  sleep 0.2
  x "kill -0 $pid" || return 1
  x "kill $pid; for i in \$(seq 1 50); do kill -0 $pid || break; sleep 0.1; done"
  x "grep -q '^ > ' /tmp/probe-strace.txt"
}
strace_unwinds && features+=(strace)
x 'pgrep -x postgres && ps -e -o pid,comm' && features+=(procps)
if [ "$(q "CREATE EXTENSION pg_bigm; CREATE TABLE probe_bigm (t text);
           INSERT INTO probe_bigm VALUES ('全文検索のテスト'), ('something else');
           CREATE INDEX ON probe_bigm USING gin (t gin_bigm_ops); SET enable_seqscan = off;
           SELECT count(*) FROM probe_bigm WHERE t LIKE likequery('検索')")" = 1 ]; then
  features+=(pg_bigm)
fi
if [ "$(q "CREATE EXTENSION pgroonga; CREATE TABLE probe_groonga (t text);
           INSERT INTO probe_groonga VALUES ('全文検索のテスト'), ('something else');
           CREATE INDEX ON probe_groonga USING pgroonga (t); SET enable_seqscan = off;
           SELECT count(*) FROM probe_groonga WHERE t &@~ '検索'")" = 1 ]; then
  features+=(pgroonga)
fi
# JIT: available with the default settings, and a query really compiled.
if [ "$(q 'SELECT pg_jit_available()')" = t ] \
   && q 'SET jit_above_cost = 0; EXPLAIN (ANALYZE) SELECT sum(i) FROM generate_series(1, 1000) i' \
      | grep -q '^JIT:'; then
  features+=(jit)
fi
if q 'CREATE EXTENSION pg_walinspect; CREATE TABLE probe_wal (i int)' > /dev/null \
   && q 'INSERT INTO probe_wal VALUES (1)' > /dev/null \
   && [ "$(q "SELECT count(*) > 0 FROM pg_get_wal_records_info(
             (SELECT redo_lsn FROM pg_control_checkpoint()), pg_current_wal_flush_lsn())")" = t ]; then
  features+=(pg_walinspect)
fi

echo "$version"
(IFS=,; echo "${features[*]}")
