# shellcheck shell=bash
# webhook: the Standard Webhooks reference library for JavaScript
# (standardwebhooks 1.1.1 from npm), installed with Debian's nodejs into a
# throwaway directory. The adapters/webhook integration test runs a receiver
# on it that verifies every delivery's webhook-signature with the library's
# own Webhook.verify, independently of hostforge's signing code. Sourced by
# scripts/integration, which defines apt_install and say.
#
# Exports HOSTFORGE_STANDARDWEBHOOKS_NODE_PATH: a node_modules directory
# holding standardwebhooks (the test runs node with NODE_PATH set to it).

webhook_up() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/hostforge-standardwebhooks.XXXXXX")
  WEBHOOK_DIR=$dir
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save standardwebhooks@1.1.1 >"$dir/npm.log" 2>&1; then
    say "webhook: npm install standardwebhooks@1.1.1 failed:"
    cat "$dir/npm.log" >&2
    return 1
  fi
  export HOSTFORGE_STANDARDWEBHOOKS_NODE_PATH="$dir/node_modules"
  say "webhook: standardwebhooks $(node -p "require('$dir/node_modules/standardwebhooks/package.json').version") on node $(node --version)"
}

webhook_down() {
  if [ -n "${WEBHOOK_DIR:-}" ]; then rm -rf "$WEBHOOK_DIR"; fi
  return 0
}
