#!/usr/bin/env bash
# Installs PostgreSQL from Debian's packages when missing, starts a throwaway cluster on a project-local
# directory, and prints the connection string for the store contract tests (ASYNCJOB_TEST_PG_URL).
# Usage: eval "$(bash scripts/postgres-for-tests.sh start)"   |   bash scripts/postgres-for-tests.sh restart|stop
set -euo pipefail
# Below Linux's ephemeral range (32768-60999): a port in it can be held, when the server starts, as the local port of
# any outgoing connection on the machine, and PostgreSQL then fails to bind ("Address already in use").
PORT="${ASYNCJOB_TEST_PG_PORT:-25432}"
DATA="${ASYNCJOB_TEST_PG_DIR:-/tmp/asyncjob-pg-$PORT}"

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$dir" ]; then
    echo "installing PostgreSQL from Debian's packages" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >&2
    dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  fi
  echo "$dir"
}

as_pg() {
  # initdb refuses to run as root; run the server as the postgres user then.
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-start}" in
  start)
    BIN=$(pg_bin)
    if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
      rm -rf "$DATA"
      mkdir -p "$DATA"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$DATA"
      as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 >/dev/null
      as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -o "-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
    fi
    as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='asyncjob_test'" | grep -q 1 \
      || as_pg "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres asyncjob_test
    echo "export ASYNCJOB_TEST_PG_URL=postgres://postgres@127.0.0.1:$PORT/asyncjob_test"
    ;;
  restart)
    # Keeps the data: a restart as an operator does one (connections are cut, committed data stays).
    BIN=$(pg_bin)
    as_pg "$BIN/pg_ctl" -D "$DATA" -m fast -w restart -l "$DATA/server.log" \
      -o "-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off" >/dev/null
    ;;
  stop)
    BIN=$(pg_bin)
    as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: $0 start|restart|stop" >&2; exit 2 ;;
esac
