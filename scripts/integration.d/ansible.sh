# shellcheck shell=bash
# ansible: Debian's ansible-core (2.14 on bookworm), whose real
# ansible-playbook the adapters/ansible integration tests run: the
# ansibletest contract, and a bundle whose playbook writes outputs that the
# extension store keeps. Sourced by scripts/integration, which defines
# apt_install and say.
#
# Exports HOSTFORGE_ANSIBLE_PLAYBOOK: the ansible-playbook program.

ansible_up() {
  command -v ansible-playbook >/dev/null 2>&1 || apt_install ansible-core
  HOSTFORGE_ANSIBLE_PLAYBOOK=$(command -v ansible-playbook)
  export HOSTFORGE_ANSIBLE_PLAYBOOK
  say "ansible: $("$HOSTFORGE_ANSIBLE_PLAYBOOK" --version | sed -n 1p)"
}

ansible_down() {
  return 0
}
