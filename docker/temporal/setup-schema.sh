#!/bin/sh
# Creates Temporal's two PostgreSQL databases (persistence and visibility) and brings their schemas to the server's
# version with the server's own SQL tool; safe to run again on databases already set up. Used by scripts/cluster.sh
# (the tool built from the Go module proxy, the schema files from the same module) and by docker-compose.yml
# (the temporalio/admin-tools image, whose schema files are under /etc/temporal/schema).
set -eu
SQL_TOOL="${SQL_TOOL:-temporal-sql-tool}"
SCHEMA_DIR="${SCHEMA_DIR:-/etc/temporal/schema}"
set -- --plugin postgres12 --ep "${POSTGRES_SEEDS:-127.0.0.1}" -p "${DB_PORT:-5432}" -u "${POSTGRES_USER:-temporal}" --pw "${POSTGRES_PWD:-}"

for pair in "${DBNAME:-temporal}:temporal" "${VISIBILITY_DBNAME:-temporal_visibility}:visibility"; do
  database="${pair%%:*}"
  schema="$SCHEMA_DIR/postgresql/v12/${pair##*:}/versioned"
  # create-database fails when the database exists; that is the only failure --quiet lets through here, since
  # the schema steps below fail loudly on a database that cannot be reached.
  "$SQL_TOOL" "$@" --db "$database" --quiet create-database
  # Version 0.0 creates only the version-tracking tables and is a no-op on a database that has them; the update
  # then applies every versioned step above the recorded version.
  "$SQL_TOOL" "$@" --db "$database" setup-schema -v 0.0
  "$SQL_TOOL" "$@" --db "$database" update-schema -d "$schema"
done
