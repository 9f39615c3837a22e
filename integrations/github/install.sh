#!/usr/bin/env bash
# The install step of action.yml: makes gpuguard-lint available to the later steps, without a
# compiler unless nothing else works. In this order:
#   GPUGUARD_DEB      a .deb (workspace path or https URL): installed with apt-get (Debian 12)
#   GPUGUARD_WHEEL    a wheel file or a pip requirement; installed into a virtualenv under
#                     RUNNER_TEMP. Empty: gpuguard-lint on PATH, else gpuguard-lint==VERSION
#                     (VERSION: this action's checkout), the wheel with the static binary
#   GPUGUARD_SOURCE   the action's checkout: built with ./build.sh only when pip cannot install
#                     the wheel (an unreleased commit, no index), a few minutes
# Appends to $GITHUB_PATH when the binary is not in a PATH directory already.
set -euo pipefail
log() { printf 'gpuguard: %s\n' "$*"; }
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
src=${GPUGUARD_SOURCE:?GPUGUARD_SOURCE (the action path) is not set}
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

# pip_install REQUIREMENT : gpuguard-lint from a wheel, in a virtualenv of its own
pip_install() {
  local venv=${RUNNER_TEMP:-/tmp}/gpuguard-venv
  python3 -m venv "$venv" >/dev/null || return 1
  "$venv/bin/pip" install --disable-pip-version-check --quiet "$1" || return 1
  echo "$venv/bin" >>"${GITHUB_PATH:?}"
  export PATH=$venv/bin:$PATH
}

if [[ -n ${GPUGUARD_DEB:-} ]]; then
  deb=$GPUGUARD_DEB
  if [[ $deb == https://* ]]; then
    deb=${RUNNER_TEMP:-/tmp}/gpuguard.deb
    curl -fsSL --retry 3 -o "$deb" "$GPUGUARD_DEB"
  fi
  [[ -f $deb ]] || { log "no such .deb: $deb"; exit 1; }
  # apt-get resolves the Depends that dpkg -i would leave unmet (Debian 12 names).
  $SUDO apt-get install -y --no-install-recommends "$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")"
elif [[ -n ${GPUGUARD_WHEEL:-} ]]; then
  log "installing $GPUGUARD_WHEEL"
  pip_install "$GPUGUARD_WHEEL" || { log "pip could not install $GPUGUARD_WHEEL"; exit 1; }
elif command -v gpuguard-lint >/dev/null; then
  log "using $(command -v gpuguard-lint)"
elif log "installing gpuguard-lint==$version (wheel)" && pip_install "gpuguard-lint==$version"; then
  :
else
  log "no wheel gpuguard-lint==$version to install; building gpuguard-lint from $src"
  (cd "$src" && BUILD_TYPE=Release ./build.sh >/dev/null)
  echo "$src/build" >>"${GITHUB_PATH:?}"
  export PATH=$src/build:$PATH
fi
gpuguard-lint --version
