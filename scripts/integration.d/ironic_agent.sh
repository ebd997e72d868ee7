# shellcheck shell=bash
# scripts/integration.d/ironic_agent.sh: a third standalone Ironic 2023.1 with
# its own ironic-inspector, on free loopback ports, whose conductor can boot
# the agent ramdisk for in-band cleaning: Ironic passes the ramdisk the URL of
# its API, which a standalone Ironic only knows from
# [service_catalog] endpoint_override (without it a clean step of the agent
# fails at once: "Couldn't get the URL of the Ironic API service"). The
# retirement's integration test (adapters/lab) erases a host through it as a
# manual clean, the lab playing the agent's lookup, heartbeat and command API.
# Sourced by scripts/integration.
#
# Exports HOSTFORGE_IRONIC_AGENT_URL and HOSTFORGE_IRONIC_AGENT_INSPECTOR_URL.

ironic_agent_up() {
  local here=scripts/ironic port iport
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  iport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  IRONIC_DIR=$HOSTFORGE_INTEGRATION_DIR/ironic-agent IRONIC_PORT=$port IRONIC_INSPECTOR=1 IRONIC_INSPECTOR_PORT=$iport \
    IRONIC_EXTRA_CONF=$'[service_catalog]\nendpoint_override = http://127.0.0.1:'"$port" \
    IRONIC_INSPECTOR_EXTRA_CONF=$'[DEFAULT]\ntimeout = 120\nclean_up_period = 10' \
    "$here/ironic-up" >"$HOSTFORGE_INTEGRATION_DIR/ironic-agent.env"
  # shellcheck source=/dev/null
  . "$HOSTFORGE_INTEGRATION_DIR/ironic-agent.env"
  export HOSTFORGE_IRONIC_AGENT_URL=$IRONIC_URL HOSTFORGE_IRONIC_AGENT_INSPECTOR_URL=$IRONIC_INSPECTOR_URL
  IRONIC_PID_FILE_AGENT=$IRONIC_PID_FILE
}

ironic_agent_down() {
  [ -z "${IRONIC_PID_FILE_AGENT:-}" ] || scripts/ironic/ironic-down "$IRONIC_PID_FILE_AGENT" || true
}
