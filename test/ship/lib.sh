# shellcheck shell=bash disable=SC2034  # variables for the sourcing test
# Helpers for the shipping tests (test/ship/*_test.sh). Source it after
# setting TEST_NAME. Each check prints "ok - ..." or "FAIL - ..."; finish
# prints "N passed, N failed" and exits 1 on any failure, or 77 (ctest's
# SKIP_RETURN_CODE) when everything was skipped.

SHIP_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$SHIP_HERE/../.." && pwd -P)
PASSED=0
FAILED=0
SKIPPED=0

ok() { PASSED=$((PASSED + 1)); printf 'ok - %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL - %s\n' "$*"; }
skip() { SKIPPED=$((SKIPPED + 1)); printf 'SKIP - %s\n' "$*"; }
not() { ! "$@"; }
quiet() { "$@" >/dev/null 2>&1; }
check() { # check DESCRIPTION CMD... : ok if CMD succeeds (check DESCRIPTION not CMD...: if it fails)
  local what=$1; shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

finish() {
  printf '%s: %d passed, %d failed, %d skipped\n' "${TEST_NAME:-ship}" "$PASSED" "$FAILED" "$SKIPPED"
  ((FAILED == 0)) || exit 1
  ((PASSED > 0 || SKIPPED == 0)) || exit 77
  exit 0
}

# A scratch directory removed on exit.
SHIP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuguard-ship.XXXXXX")
trap 'rm -rf "$SHIP_TMP"' EXIT

# find_binary BUILD_DIR NAME : the built executable, or nothing. Only where
# users find it (BUILD_DIR/NAME, as the README and test/e2e say), so a binary
# that lands elsewhere fails these tests rather than the user.
find_binary() {
  [[ -n $1 && -x $1/$2 && -f $1/$2 ]] && echo "$1/$2"
  return 0
}

# cmake_defines_target BUILD_DIR NAME : the CMake project in BUILD_DIR has that target
cmake_defines_target() {
  [[ -f $1/CMakeFiles/TargetDirectories.txt ]] && grep -q "/$2.dir\$" "$1/CMakeFiles/TargetDirectories.txt"
}

# sanitizer_build BUILD_DIR : built with GPUGUARD_SANITIZE=ON
sanitizer_build() {
  [[ -f $1/CMakeCache.txt ]] && grep -qE '^GPUGUARD_SANITIZE:BOOL=(ON|1|TRUE|YES)$' "$1/CMakeCache.txt"
}

# A kubectl whose kustomize understands components and inline patches
# (kustomize v5, kubectl >= 1.27). Sets KUBECTL, or explains why not in
# KUBECTL_MISSING. Debian 12's kubernetes-client (kubectl 1.20, kustomize
# v2.0.3) is too old.
find_kubectl() {
  KUBECTL=${KUBECTL:-$(command -v kubectl || true)}
  KUBECTL_MISSING=
  if [[ -z $KUBECTL ]]; then
    KUBECTL_MISSING="no kubectl on PATH (install kubectl >= 1.27, which renders kustomize v5)"
    return 1
  fi
  local minor
  minor=$("$KUBECTL" version --client -o json 2>/dev/null | python3 -c 'import json,sys; v=json.load(sys.stdin)["clientVersion"]; print(int("".join(c for c in v["minor"] if c.isdigit())))' 2>/dev/null || true)
  if [[ -z $minor ]]; then
    minor=$("$KUBECTL" version --client 2>/dev/null | sed -n 's/.*Minor:"\([0-9]*\).*/\1/p; s/^Client Version: v1\.\([0-9]*\)\..*/\1/p' | head -n 1)
  fi
  if [[ -z $minor || $minor -lt 27 ]]; then
    KUBECTL_MISSING="$KUBECTL is kubectl 1.${minor:-?}; rendering gpuguard's kustomizations needs kubectl >= 1.27 (kustomize v5)"
    KUBECTL=
    return 1
  fi
  return 0
}

# build_dir [DIR] : the build directory as an absolute path (tests cd elsewhere)
build_dir() {
  local d=${1:-$REPO/build}
  if [[ -d $d ]]; then (cd "$d" && pwd -P); else printf '%s\n' "$d"; fi
}
