#!/usr/bin/env bash
# A real Temporal cluster on this machine: Temporal's own server (built once from the Go module proxy, cached) on
# PostgreSQL persistence and PostgreSQL visibility, schemas applied with the server's SQL tool, the default
# namespace and asyncjob's search attributes registered. The server's configuration is docker/temporal/server.yaml,
# the same file docker-compose.yml gives the official image.
#
#   bash scripts/cluster.sh start            builds if needed, starts PostgreSQL and the server, prints exports:
#                                            eval "$(bash scripts/cluster.sh start)"
#   bash scripts/cluster.sh restart-server   stops the server (SIGTERM) and starts it again on the same data
#   bash scripts/cluster.sh restart-postgres restarts PostgreSQL (connections cut, data kept)
#   bash scripts/cluster.sh stop             stops both; `stop --wipe` also deletes the data
#   bash scripts/cluster.sh build | status
#
# Settings (environment): ASYNCJOB_CLUSTER_PORT (frontend gRPC, default 7333; the other services use the next
# ports and +100), ASYNCJOB_CLUSTER_PG_PORT (default 25440;
# below the ephemeral port range, as scripts/postgres-for-tests.sh says why), ASYNCJOB_CLUSTER_DIR (state, default
# /tmp/asyncjob-cluster), ASYNCJOB_CLUSTER_CACHE (binaries, default ~/.cache/asyncjob/temporal-server-VERSION).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

VERSION=1.32.2
PORT="${ASYNCJOB_CLUSTER_PORT:-7333}"
PG_PORT="${ASYNCJOB_CLUSTER_PG_PORT:-25440}"
STATE="${ASYNCJOB_CLUSTER_DIR:-/tmp/asyncjob-cluster}"
CACHE="${ASYNCJOB_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asyncjob/temporal-server-$VERSION}"
ADDRESS="127.0.0.1:$PORT"
PID_FILE="$STATE/server.pid"
STORE_DB=asyncjob

log() { echo "cluster: $*" >&2; }

# Temporal records each service's membership port in a PostgreSQL smallint: the highest one (PORT + 106) must fit.
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT + 106 > 32767)); then
  log "ASYNCJOB_CLUSTER_PORT=$PORT: choose 1024-32661 (Temporal stores its services' ports, up to PORT+106, as a smallint)"
  exit 2
fi

postgres() {
  ASYNCJOB_TEST_PG_PORT="$PG_PORT" ASYNCJOB_TEST_PG_DIR="$STATE/postgresql" bash scripts/postgres-for-tests.sh "$@"
}

temporal_cli() {
  "$(npm run --silent temporal -- ensure | cut -d' ' -f1)" "$@" --address "$ADDRESS"
}

# Go 1.21 or newer (which fetches the toolchain the server's go.mod asks for, GOTOOLCHAIN=auto); when the machine
# has none, that toolchain itself comes from the Go module proxy (golang.org/toolchain, the module `go` uses to
# switch toolchains), since Debian's golang-go is too old for toolchain switching.
GO_TOOLCHAIN=go1.26.11
ensure_go() {
  if command -v go >/dev/null 2>&1 &&
    [ "$(go env GOVERSION 2>/dev/null | sed -E 's/^go1\.([0-9]+).*/\1/')" -ge 21 ] 2>/dev/null; then return; fi
  local arch
  case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) log "no Go toolchain for $(uname -m)"; exit 1 ;; esac
  local module="golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-$arch"
  if [ ! -x "$CACHE/$module/bin/go" ]; then
    log "fetching $module from the Go module proxy"
    mkdir -p "$CACHE"
    curl -fsSL "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-$GO_TOOLCHAIN.linux-$arch.zip" -o "$CACHE/go.zip"
    python3 -m zipfile -e "$CACHE/go.zip" "$CACHE" && rm "$CACHE/go.zip"
    # Module zips keep no file modes.
    chmod +x "$CACHE/$module/bin/"* "$CACHE/$module/pkg/tool/"*/*
  fi
  export PATH="$CACHE/$module/bin:$PATH" GOROOT="$CACHE/$module"
}

# The server and its SQL tool, built from the Go module proxy into the cache (about 15 minutes on 2 cores the
# first time); the schema files come from the same module.
build() {
  if [ -x "$CACHE/server" ] && [ -x "$CACHE/sql" ] && [ -d "$CACHE/schema" ]; then return; fi
  ensure_go
  log "building Temporal server $VERSION and its SQL tool from the Go module proxy into $CACHE"
  mkdir -p "$CACHE"
  local started=$SECONDS
  GOTOOLCHAIN=auto GOFLAGS=-mod=mod GOBIN="$CACHE" \
    go install "go.temporal.io/server/cmd/server@v$VERSION" "go.temporal.io/server/cmd/tools/sql@v$VERSION" >&2
  local module
  module="$(GOTOOLCHAIN=auto go env GOMODCACHE)/go.temporal.io/server@v$VERSION"
  rm -rf "$CACHE/schema" && cp -r "$module/schema" "$CACHE/schema" && chmod -R u+w "$CACHE/schema"
  log "built in $((SECONDS - started)) s"
}

# The server's environment, as `env` arguments.
SERVER_ENV=(DB_PORT="$PG_PORT" POSTGRES_SEEDS=127.0.0.1 POSTGRES_USER=postgres POSTGRES_PWD=
  FRONTEND_GRPC_PORT="$PORT" DYNAMIC_CONFIG_FILE_PATH="$ROOT/docker/temporal-dynamicconfig.yaml")

# Alive and not a zombie: the server outlives the shell that started it, and a container's init may never reap it.
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }" # the state follows the command name in parentheses
  [[ "$stat" != Z* ]]
}

server_running() { [ -f "$PID_FILE" ] && alive "$(cat "$PID_FILE")"; }

# The ports server.yaml gives the services: frontend, history, matching, worker (gRPC), frontend HTTP, membership.
SERVICE_PORTS=(0 1 2 6 10 100 101 102 106)

# Another process on one of them would answer the health check in our server's place while ours dies at start.
refuse_taken_ports() {
  local offset
  for offset in "${SERVICE_PORTS[@]}"; do
    if (: </dev/tcp/127.0.0.1/$((PORT + offset))) 2>/dev/null; then
      log "port $((PORT + offset)) (ASYNCJOB_CLUSTER_PORT + $offset) is already in use: stop what holds it or choose another ASYNCJOB_CLUSTER_PORT"
      # Who holds it, when the machine can say (iproute2's ss; nothing printed without it).
      if command -v ss >/dev/null; then ss -Htlnp "sport = :$((PORT + offset))" >&2 || true; fi
      exit 1
    fi
  done
}

start_server() {
  if server_running; then return; fi
  refuse_taken_ports
  # `env` alone is the background job and execs nohup, which execs the server, so `$!` is the server's PID. (A
  # function or an `a && b` list there runs in a subshell whose PID is not the server's: a restart left it up.)
  (
    cd "$STATE" || exit 1
    env "${SERVER_ENV[@]}" nohup "$CACHE/server" --config-file "$ROOT/docker/temporal/server.yaml" --allow-no-auth \
      start >>"$STATE/server.log" 2>&1 &
    echo $! >"$PID_FILE"
  )
  for _ in $(seq 1 300); do
    if temporal_cli operator cluster health 2>/dev/null | grep -q SERVING; then return; fi
    if ! server_running; then log "the server exited; its log:"; tail -n 40 "$STATE/server.log" >&2; exit 1; fi
    sleep 0.2
  done
  log "the server did not answer within 60 s"; exit 1
}

stop_server() {
  if ! server_running; then return; fi
  local pid
  pid="$(cat "$PID_FILE")"
  kill -TERM "$pid"
  for _ in $(seq 1 150); do alive "$pid" || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
  # Until its ports are closed a new server cannot bind them.
  for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.2; done
  rm -f "$PID_FILE"
}

# The default namespace and the search attributes of src/core/search-attribute-names.ts, once; then waits until
# the namespace answers (a new namespace reaches the frontend's cache a few seconds after it is registered).
register() {
  temporal_cli operator namespace describe --namespace default >/dev/null 2>&1 ||
    temporal_cli operator namespace create --namespace default --retention 72h >&2
  local wanted
  wanted="$(npx tsx -e 'import { SEARCH_ATTRIBUTES as a } from "./src/core/search-attribute-names";
    console.log(Object.entries(a).map(([n, t]) => `${n} ${t}`).join("\n"))')"
  # A namespace just created is "not found" for a few seconds.
  local have=""
  for _ in $(seq 1 150); do
    have="$(temporal_cli operator search-attribute list --namespace default 2>/dev/null)" && break
    sleep 0.2
  done
  local args=()
  while read -r name type; do
    grep -q "^ *$name " <<<"$have" || args+=(--name "$name" --type "$type")
  done <<<"$wanted"
  if [ ${#args[@]} -gt 0 ]; then temporal_cli operator search-attribute create --namespace default "${args[@]}" >&2; fi
  for _ in $(seq 1 150); do
    if temporal_cli workflow count --namespace default --query 'AsyncJobState = "escalated"' >/dev/null 2>&1; then return; fi
    sleep 0.2
  done
  log "the default namespace does not answer queries on AsyncJobState"; exit 1
}

case "${1:-}" in
  build) build ;;
  start)
    build
    mkdir -p "$STATE"
    eval "$(postgres start)"
    SQL_TOOL="$CACHE/sql" SCHEMA_DIR="$CACHE/schema" env "${SERVER_ENV[@]}" sh docker/temporal/setup-schema.sh \
      >"$STATE/schema.log" 2>&1 || { tail -n 20 "$STATE/schema.log" >&2; exit 1; }
    start_server
    register
    store_url="${ASYNCJOB_TEST_PG_URL%/*}/$STORE_DB"
    psql "${ASYNCJOB_TEST_PG_URL}" -tAc "SELECT 1 FROM pg_database WHERE datname='$STORE_DB'" | grep -q 1 ||
      psql "${ASYNCJOB_TEST_PG_URL}" -qc "CREATE DATABASE $STORE_DB" >&2
    log "Temporal $VERSION at $ADDRESS (PostgreSQL persistence and visibility on port $PG_PORT), log $STATE/server.log"
    echo "export TEMPORAL_ADDRESS=$ADDRESS"
    echo "export ASYNCJOB_CLUSTER_STORE=$store_url"
    ;;
  restart-server) stop_server; start_server ;;
  restart-postgres) postgres restart ;;
  stop)
    stop_server
    postgres stop
    if [ "${2:-}" = "--wipe" ]; then rm -rf "$STATE"; fi
    ;;
  status)
    if server_running; then echo "server: running, pid $(cat "$PID_FILE"), $ADDRESS"; else echo "server: stopped"; fi
    ;;
  *) echo "usage: $0 build | start | restart-server | restart-postgres | stop [--wipe] | status" >&2; exit 2 ;;
esac
