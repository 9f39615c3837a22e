#!/usr/bin/env bash
# The install step of action.yml: makes gpuguard-lint available to the later steps.
#   GPUGUARD_DEB      a .deb (workspace path or https URL): installed with apt-get
#   GPUGUARD_SOURCE   the action's checkout: built with ./build.sh when nothing else is there
# Appends to $GITHUB_PATH when the binary is not in a PATH directory already.
set -euo pipefail
log() { printf 'gpuguard: %s\n' "$*"; }
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo

if [[ -n ${GPUGUARD_DEB:-} ]]; then
  deb=$GPUGUARD_DEB
  if [[ $deb == https://* ]]; then
    deb=${RUNNER_TEMP:-/tmp}/gpuguard.deb
    curl -fsSL --retry 3 -o "$deb" "$GPUGUARD_DEB"
  fi
  [[ -f $deb ]] || { log "no such .deb: $deb"; exit 1; }
  # apt-get resolves the Depends that dpkg -i would leave unmet (Debian 12 / Ubuntu names).
  $SUDO apt-get install -y --no-install-recommends "$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")"
elif command -v gpuguard-lint >/dev/null; then
  log "using $(command -v gpuguard-lint)"
else
  src=${GPUGUARD_SOURCE:?GPUGUARD_SOURCE (the action path) is not set}
  log "building gpuguard-lint from $src"
  (cd "$src" && CMAKE_ARGS="-DGPUGUARD_BUILD_TESTS=OFF" BUILD_TYPE=Release ./build.sh >/dev/null)
  echo "$src/build" >>"${GITHUB_PATH:?}"
  export PATH=$src/build:$PATH
fi
gpuguard-lint --version
