# scripts/integration.d/ironic.sh: a real standalone Ironic 2023.1 and
# ironic-inspector from Debian packages on 127.0.0.1 (noauth, sqlite,
# fake-hardware), for adapters/ironic's contract suite and the full
# enrollment against real Ironic. Sourced by scripts/integration.
#
# Exports HOSTFORGE_IRONIC_URL, HOSTFORGE_IRONIC_INSPECTOR_URL and, for the
# NodeLocked test, HOSTFORGE_IRONIC_LOCKING_URL: a second Ironic whose fake
# power takes 4 s while holding the node lock.

ironic_up() {
  local here=scripts/ironic
  IRONIC_DIR=$HOSTFORGE_INTEGRATION_DIR/ironic IRONIC_INSPECTOR=1 \
    IRONIC_INSPECTOR_EXTRA_CONF=$'[DEFAULT]\ntimeout = 120\nclean_up_period = 10' \
    "$here/ironic-up" >"$HOSTFORGE_INTEGRATION_DIR/ironic.env"
  # shellcheck source=/dev/null
  . "$HOSTFORGE_INTEGRATION_DIR/ironic.env"
  export HOSTFORGE_IRONIC_URL=$IRONIC_URL HOSTFORGE_IRONIC_INSPECTOR_URL=$IRONIC_INSPECTOR_URL
  IRONIC_PID_FILE_MAIN=$IRONIC_PID_FILE

  IRONIC_DIR=$HOSTFORGE_INTEGRATION_DIR/ironic-locking IRONIC_PORT=6386 \
    IRONIC_EXTRA_CONF=$'[fake]\npower_delay = 4\n[conductor]\nnode_locked_retry_attempts = 1' \
    "$here/ironic-up" >"$HOSTFORGE_INTEGRATION_DIR/ironic-locking.env"
  # shellcheck source=/dev/null
  . "$HOSTFORGE_INTEGRATION_DIR/ironic-locking.env"
  export HOSTFORGE_IRONIC_LOCKING_URL=$IRONIC_URL
  IRONIC_PID_FILE_LOCKING=$IRONIC_PID_FILE
}

ironic_down() {
  [ -z "${IRONIC_PID_FILE_MAIN:-}" ] || scripts/ironic/ironic-down "$IRONIC_PID_FILE_MAIN" || true
  [ -z "${IRONIC_PID_FILE_LOCKING:-}" ] || scripts/ironic/ironic-down "$IRONIC_PID_FILE_LOCKING" || true
}
