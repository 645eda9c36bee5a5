#!/usr/bin/env bash
# A streaming hot standby of the local PostgreSQL cluster, for the replica tests (issue 30, "Reads from
# replicas"; docs/SCALING.md). Idempotent: nothing happens when the standby already runs and streams.
#
#   .ci/standby.sh [database ...]
#
# Primary: the local cluster on PRIMARY_PORT (default 5432). Standby: STANDBY_PORT (default 5433), data in
# STANDBY_DIR (default /var/lib/postgresql/<version>/standby), made with pg_basebackup -R -X stream by the role
# REPLICATOR_ROLE (REPLICATION LOGIN). The standby replicates every database of the cluster. The tests pause and
# resume WAL replay on it (pg_wal_replay_pause / pg_wal_replay_resume), so EXECUTE on both is granted to
# TEST_ROLE on the primary in every database named on the command line (default: syncular_test) and in
# template1 (databases created later inherit it); the grants replicate. Replay left paused by an interrupted
# test is resumed. Runs as root (or with sudo -n); the server processes run as the postgres OS user.
set -euo pipefail

PRIMARY_PORT=${PRIMARY_PORT:-5432}
STANDBY_PORT=${STANDBY_PORT:-5433}
REPLICATOR_ROLE=${REPLICATOR_ROLE:-syncular_replicator}
REPLICATOR_PASSWORD=${REPLICATOR_PASSWORD:-syncular_replicator}
TEST_ROLE=${TEST_ROLE:-syncular}
DATABASES=("$@")
if [ "${#DATABASES[@]}" -eq 0 ]; then DATABASES=(syncular_test); fi

log() { echo "[standby] $*" >&2; }
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo -n); fi
as_postgres() { (cd / && "${SUDO[@]}" runuser -u postgres -- "$@"); }
psql_on() {
  local port=$1 db=$2
  shift 2
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$port" -d "$db" "$@"
}

pg_version=$(as_postgres psql -X -tA -h /var/run/postgresql -p "$PRIMARY_PORT" -d postgres \
  -c "SELECT current_setting('server_version_num')::int / 10000")
PG_BIN=/usr/lib/postgresql/${pg_version}/bin
STANDBY_DIR=${STANDBY_DIR:-/var/lib/postgresql/${pg_version}/standby}
CONF_DIR=/etc/postgresql/${pg_version}/main

# --- on the primary: the replication role and the replay-control grants ---------------------------------------
psql_on "$PRIMARY_PORT" postgres <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${REPLICATOR_ROLE}') THEN
    CREATE ROLE ${REPLICATOR_ROLE} WITH REPLICATION LOGIN PASSWORD '${REPLICATOR_PASSWORD}';
  ELSE
    ALTER ROLE ${REPLICATOR_ROLE} WITH REPLICATION LOGIN PASSWORD '${REPLICATOR_PASSWORD}';
  END IF;
END
\$\$;
SQL
for db in template1 "${DATABASES[@]}"; do
  if [ "$(psql_on "$PRIMARY_PORT" postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '${db}'")" = "1" ]; then
    psql_on "$PRIMARY_PORT" "$db" -c "GRANT EXECUTE ON FUNCTION pg_wal_replay_pause() TO ${TEST_ROLE};
      GRANT EXECUTE ON FUNCTION pg_wal_replay_resume() TO ${TEST_ROLE}" 2>/dev/null \
      || log "could not grant replay control in ${db} (role ${TEST_ROLE} missing?)"
  fi
done

streaming() {
  [ "$(psql_on "$STANDBY_PORT" postgres -tAc "SELECT pg_is_in_recovery()" 2>/dev/null || true)" = "t" ] \
    && [ "$(psql_on "$PRIMARY_PORT" postgres -tAc "SELECT count(*) FROM pg_stat_replication
          WHERE application_name = 'syncular_standby' AND state = 'streaming'" 2>/dev/null || true)" -ge 1 ]
}

wait_streaming() {
  for _ in $(seq 1 "$1"); do
    streaming && return 0
    sleep 1
  done
  return 1
}

resume_replay() {
  psql_on "$STANDBY_PORT" postgres -tAc "SELECT pg_wal_replay_resume()" >/dev/null 2>&1 || true
}

start_standby() {
  as_postgres "$PG_BIN/pg_ctl" -D "$STANDBY_DIR" -l "$STANDBY_DIR/log" -w -t 60 start >/dev/null
}

if streaming; then
  resume_replay
  log "standby already streaming on port ${STANDBY_PORT}"
  exit 0
fi

if [ -f "$STANDBY_DIR/standby.signal" ]; then
  if ! as_postgres "$PG_BIN/pg_ctl" -D "$STANDBY_DIR" status >/dev/null 2>&1; then
    log "starting the existing standby in ${STANDBY_DIR}"
    start_standby || true
  fi
  if wait_streaming 30; then
    resume_replay
    log "standby streaming on port ${STANDBY_PORT}"
    exit 0
  fi
  log "the existing standby does not stream (WAL recycled?): making it again"
  as_postgres "$PG_BIN/pg_ctl" -D "$STANDBY_DIR" -m fast -w stop >/dev/null 2>&1 || true
fi

log "pg_basebackup of port ${PRIMARY_PORT} into ${STANDBY_DIR}"
"${SUDO[@]}" rm -rf "$STANDBY_DIR"
# --checkpoint=fast: an immediate checkpoint, not a spread one, which on a primary with many dirty buffers (after
# benchmarks) paces its writes over most of checkpoint_timeout before the copy even starts.
as_postgres env PGPASSWORD="$REPLICATOR_PASSWORD" PGAPPNAME=syncular_standby "$PG_BIN/pg_basebackup" \
  -h 127.0.0.1 -p "$PRIMARY_PORT" -U "$REPLICATOR_ROLE" -D "$STANDBY_DIR" -R -X stream --checkpoint=fast
# Debian keeps the configuration in /etc/postgresql, so the backup has none: the standby's own, with the
# settings a hot standby must not set lower than its primary copied from the primary.
settings=$(as_postgres psql -X -tA -h /var/run/postgresql -p "$PRIMARY_PORT" -d postgres -F ' = ' -c \
  "SELECT name, quote_literal(setting) FROM pg_settings WHERE name IN ('max_connections', 'max_worker_processes',
     'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction', 'shared_preload_libraries')")
as_postgres tee -a "$STANDBY_DIR/postgresql.conf" >/dev/null <<CONF
# written by .ci/standby.sh
port = ${STANDBY_PORT}
listen_addresses = '127.0.0.1'
unix_socket_directories = '/var/run/postgresql'
hot_standby = on
hba_file = '${CONF_DIR}/pg_hba.conf'
ident_file = '${CONF_DIR}/pg_ident.conf'
cluster_name = '${pg_version}/standby'
${settings}
CONF
# pg_basebackup -R wrote primary_conninfo; name the walreceiver so streaming() can find it.
as_postgres tee -a "$STANDBY_DIR/postgresql.auto.conf" >/dev/null <<CONF
primary_conninfo = 'host=127.0.0.1 port=${PRIMARY_PORT} user=${REPLICATOR_ROLE} password=${REPLICATOR_PASSWORD} application_name=syncular_standby'
CONF
log "starting the standby on port ${STANDBY_PORT}"
start_standby
if ! wait_streaming 60; then
  log "the standby does not stream; its log:"
  tail -n 40 "$STANDBY_DIR/log" >&2 || true
  exit 1
fi
log "standby streaming on port ${STANDBY_PORT}"
