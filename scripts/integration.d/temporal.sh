# scripts/integration.d/temporal.sh: a real Temporal dev server on 127.0.0.1
# for adapters/temporal's integration tests. Sourced by scripts/integration.
#
# The temporal CLI (which embeds the dev server) is built once with
# `go install` into a cache directory (about 4 minutes on 2 cores, 250 MB);
# later runs reuse it. v1.5.1 is the newest release `go install` can build.
#
# Exports:
#   HOSTFORGE_TEMPORAL_ADDRESS  host:port of the dev server's frontend
#   HOSTFORGE_TEMPORAL_CLI      path of the temporal CLI binary

TEMPORAL_CLI_VERSION=v1.5.1
TEMPORAL_CLI_DIR=${HOSTFORGE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hostforge}/temporal-cli-$TEMPORAL_CLI_VERSION

temporal_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

temporal_up() {
  local bin=$TEMPORAL_CLI_DIR/temporal
  if [ ! -x "$bin" ]; then
    say "building the temporal CLI $TEMPORAL_CLI_VERSION into $TEMPORAL_CLI_DIR (a few minutes, once)"
    mkdir -p "$TEMPORAL_CLI_DIR"
    GOFLAGS= GOBIN=$TEMPORAL_CLI_DIR go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  fi
  local dir=$HOSTFORGE_INTEGRATION_DIR/temporal port http metrics
  mkdir -p "$dir"
  port=$(temporal_free_port); http=$(temporal_free_port); metrics=$(temporal_free_port)
  "$bin" server start-dev --headless --ip 127.0.0.1 --port "$port" --http-port "$http" --metrics-port "$metrics" \
    --db-filename "$dir/temporal.db" --log-level warn >"$dir/server.log" 2>&1 &
  echo $! >"$dir/server.pid"
  local i
  for i in $(seq 1 120); do
    if "$bin" operator cluster health --address "127.0.0.1:$port" >/dev/null 2>&1; then
      export HOSTFORGE_TEMPORAL_ADDRESS=127.0.0.1:$port
      export HOSTFORGE_TEMPORAL_CLI=$bin
      say "temporal dev server on 127.0.0.1:$port (pid $(cat "$dir/server.pid"))"
      return 0
    fi
    if ! kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then break; fi
    sleep 0.5
  done
  say "temporal dev server did not come up; its log:"
  tail -n 40 "$dir/server.log" >&2 || true
  return 1
}

temporal_down() {
  local pidfile=$HOSTFORGE_INTEGRATION_DIR/temporal/server.pid pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}
