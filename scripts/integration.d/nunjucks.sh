# shellcheck shell=bash
# nunjucks: Nunjucks 3.2.4 from npm, installed with Debian's nodejs into a
# throwaway directory. The extensions/nunjucks integration test renders the
# golden template corpus (extensions/testdata) with it and fails on any
# difference from the recorded outputs the Go renderer is held to. Sourced
# by scripts/integration, which defines apt_install and say.
#
# Exports HOSTFORGE_NUNJUCKS_NODE_PATH: a node_modules directory holding
# nunjucks 3.2.4 (the test runs node with NODE_PATH set to it).

nunjucks_up() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/hostforge-nunjucks.XXXXXX")
  NUNJUCKS_DIR=$dir
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save nunjucks@3.2.4 >"$dir/npm.log" 2>&1; then
    say "nunjucks: npm install nunjucks@3.2.4 failed:"
    cat "$dir/npm.log" >&2
    return 1
  fi
  export HOSTFORGE_NUNJUCKS_NODE_PATH="$dir/node_modules"
  say "nunjucks: $(node -p "require('$dir/node_modules/nunjucks/package.json').version") on node $(node --version)"
}

nunjucks_down() {
  if [ -n "${NUNJUCKS_DIR:-}" ]; then rm -rf "$NUNJUCKS_DIR"; fi
  return 0
}
