# shellcheck shell=bash
# tmux: Debian's tmux, the terminal the live-view test of cmd/hostforge runs
# 'hostforge enroll' in (a real pty, at 80 and 160 columns) and reads back
# with capture-pane. Each test starts its own tmux
# server on a socket of its own and kills it. Sourced by
# scripts/integration, which defines apt_install and say.
#
# Exports HOSTFORGE_TMUX: the tmux program.

tmux_up() {
  command -v tmux >/dev/null 2>&1 || apt_install tmux
  HOSTFORGE_TMUX=$(command -v tmux)
  export HOSTFORGE_TMUX
  say "tmux: $("$HOSTFORGE_TMUX" -V)"
}

tmux_down() {
  return 0
}
