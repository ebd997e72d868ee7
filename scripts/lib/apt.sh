# shellcheck shell=bash
# apt_install PKG... : install Debian packages that are missing, without
# starting services (a policy-rc.d that refuses them is in place while apt
# runs). Needs root or sudo. Sourced by scripts/integration and .ci/run.
apt_ready=""
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  local rcd=/usr/sbin/policy-rc.d made=""
  if [ ! -e $rcd ]; then printf '#!/bin/sh\nexit 101\n' | $sudo tee $rcd >/dev/null; $sudo chmod 755 $rcd; made=1; fi
  if [ -z "$apt_ready" ]; then $sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq update; apt_ready=1; fi
  echo "installing ${missing[*]}" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}" >/dev/null
  [ -z "$made" ] || $sudo rm -f $rcd
}
