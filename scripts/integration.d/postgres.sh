# shellcheck shell=bash
# postgres: a throwaway Debian PostgreSQL 15 cluster on a loopback port, in
# its own temp dir (the integration dir is private to root), run as the
# unprivileged postgres user when root (initdb refuses root). The state adapter's contract suites (ledger,
# firmware, extensions) run against it. Sourced by scripts/integration,
# which defines apt_install and say.
#
# Exports HOSTFORGE_POSTGRES_DSN: a postgres:// URL of a superuser with a
# password (tests create and drop their own databases with it).

postgres_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

postgres_up() {
  apt_install postgresql-15
  local bin dir port pw user=postgres run=()
  bin=$(postgres_bin)
  [ -n "$bin" ] || { say "postgres: no server binaries under /usr/lib/postgresql"; return 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/hostforge-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$dir"
    run=(runuser -u postgres --)
  else
    user=$(id -un)
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
  printf '%s\n' "$pw" >"$dir/pwfile"
  chmod 600 "$dir/pwfile"
  [ "$(id -u)" != 0 ] || chown postgres:postgres "$dir/pwfile"
  "${run[@]}" "$bin/initdb" -D "$dir/data" -U "$user" --pwfile="$dir/pwfile" -A scram-sha-256 >"$dir/initdb.log" 2>&1 ||
    { say "postgres: initdb failed:"; cat "$dir/initdb.log" >&2; return 1; }
  rm -f "$dir/pwfile"
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200 -c fsync=off" start >/dev/null ||
    { say "postgres: the server did not start:"; cat "$dir/server.log" >&2; return 1; }
  POSTGRES_DIR=$dir
  POSTGRES_DATA_DIR=$dir/data
  POSTGRES_RUN=("${run[@]}")
  export HOSTFORGE_POSTGRES_DSN="postgres://$user:$pw@127.0.0.1:$port/postgres?sslmode=disable"
  say "postgres: $("$bin/postgres" --version) on 127.0.0.1:$port"
}

postgres_down() {
  [ -n "${POSTGRES_DATA_DIR:-}" ] || return 0
  "${POSTGRES_RUN[@]}" "$(postgres_bin)/pg_ctl" -D "$POSTGRES_DATA_DIR" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$POSTGRES_DIR"
}
