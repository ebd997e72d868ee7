# shellcheck shell=bash
# sshd: a real OpenSSH sshd on a loopback, non-default port, with its own
# config, host key and authorized_keys under $HOSTFORGE_INTEGRATION_DIR/sshd,
# plus the real DHCP servers' config checkers (dhcpd -t, kea-dhcp4 -t) that
# the adapters/ssh integration tests run through it. Sourced by
# scripts/integration, which defines apt_install and say.

sshd_dir() { echo "$HOSTFORGE_INTEGRATION_DIR/sshd"; }

sshd_up() {
  apt_install openssh-server openssh-sftp-server isc-dhcp-server kea-dhcp4-server
  local d port user sudo=""
  d=$(sshd_dir)
  [ "$(id -u)" = 0 ] || sudo=sudo
  mkdir -p "$d/scratch"
  chmod 700 "$d"
  rm -f "$d/host_ed25519_key" "$d/client_key"
  ssh-keygen -q -t ed25519 -N '' -C hostforge-it-host -f "$d/host_ed25519_key"
  ssh-keygen -q -t ed25519 -N '' -C hostforge-it-client -f "$d/client_key"
  cp "$d/client_key.pub" "$d/authorized_keys"
  chmod 600 "$d/authorized_keys"
  # A free loopback port other than 22.
  port=""
  for _ in $(seq 1 50); do
    local p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
  done
  [ -n "$port" ] || { say "sshd: no free port"; return 1; }
  user=$(id -un)
  cat >"$d/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $d/host_ed25519_key
PidFile $d/sshd.pid
AuthorizedKeysFile $d/authorized_keys
AllowUsers $user
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
LogLevel VERBOSE
CONF
  # Privilege separation directory the Debian package creates at boot.
  [ -d /run/sshd ] || $sudo mkdir -p -m 0755 /run/sshd
  /usr/sbin/sshd -t -f "$d/sshd_config"
  /usr/sbin/sshd -f "$d/sshd_config" -E "$d/sshd.log"
  local i
  for i in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$d/host_ed25519_key.pub")" >"$d/known_hosts"
  export HOSTFORGE_SSHD_ADDR="127.0.0.1:$port"
  export HOSTFORGE_SSHD_USER="$user"
  export HOSTFORGE_SSHD_KEY="$d/client_key"
  export HOSTFORGE_SSHD_KNOWN_HOSTS="$d/known_hosts"
  export HOSTFORGE_SSHD_DIR="$d/scratch"
  HOSTFORGE_DHCPD=$(command -v dhcpd || echo /usr/sbin/dhcpd)
  HOSTFORGE_KEA_DHCP4=$(command -v kea-dhcp4 || echo /usr/sbin/kea-dhcp4)
  export HOSTFORGE_DHCPD HOSTFORGE_KEA_DHCP4
  say "sshd: listening on $HOSTFORGE_SSHD_ADDR (pid $(cat "$d/sshd.pid"))"
}

sshd_down() {
  local d
  d=$(sshd_dir)
  if [ -f "$d/sshd.pid" ]; then
    kill "$(cat "$d/sshd.pid")" 2>/dev/null || true
    rm -f "$d/sshd.pid"
  fi
}
