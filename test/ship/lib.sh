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

# find_helm : sets HELM (helm v4, or a recent v3, on PATH, or the one test/tools/install-kubectl-helm.sh
# cached), or explains why not in HELM_MISSING. Never downloads.
find_helm() {
  HELM=${HELM:-$(command -v helm || true)}
  HELM_MISSING=
  local cached
  cached=$(ls -d "${GPUGUARD_TOOLS_CACHE:-/var/cache/gpuguard-tools}"/kubectl-helm-*/helm 2>/dev/null | tail -n 1)
  [[ -n $HELM ]] || HELM=$cached
  if [[ -z $HELM ]]; then
    HELM_MISSING="no helm on PATH (eval \"\$(test/tools/install-kubectl-helm.sh)\" installs helm v4)"
    return 1
  fi
  return 0
}

# A kubectl >= 1.27 from PATH, or the cached one of test/tools/install-kubectl-helm.sh.
find_kubectl_or_cached() {
  find_kubectl && return 0
  local cached
  cached=$(ls -d "${GPUGUARD_TOOLS_CACHE:-/var/cache/gpuguard-tools}"/kubectl-helm-*/kubectl 2>/dev/null | tail -n 1)
  [[ -n $cached ]] || return 1
  KUBECTL=$cached find_kubectl
}

# report_lines PREFIX FILE : a checker's "ok - "/"FAIL - " lines as results, with a prefix
report_lines() {
  local prefix=$1 file=$2 line
  while IFS= read -r line; do
    case $line in
      "ok - "*) ok "$prefix${line#ok - }" ;;
      "FAIL - "*) fail "$prefix${line#FAIL - }" ;;
      *) fail "$prefix$line" ;;
    esac
  done <"$file"
}

# python_with MODULE... : a python3 that imports every MODULE, or nothing
python_with() {
  local p IFS=,
  for p in python3 /usr/bin/python3; do
    command -v "$p" >/dev/null || continue
    if "$p" -c "import $*" 2>/dev/null; then command -v "$p"; return 0; fi
  done
  return 0
}

# start_webhook BINARY LOG ARGS... : starts gpuguard-webhook on a free loopback port (--port=0)
# and waits (10 s at most) for its "serving" line. Sets WEBHOOK_PID and WEBHOOK_PORT; stop it
# with stop_webhook. Returns 1 if it did not come up (LOG says why).
start_webhook() {
  local bin=$1 log=$2 i; shift 2
  "$bin" --bind-address=127.0.0.1 --port=0 "$@" >"$log" 2>&1 &
  WEBHOOK_PID=$!
  WEBHOOK_PORT=
  for ((i = 0; i < 100; i++)); do
    WEBHOOK_PORT=$(sed -n 's/.*"msg":"serving".*"port":\([0-9]*\).*/\1/p' "$log" | head -n 1)
    [[ -n $WEBHOOK_PORT ]] && return 0
    kill -0 "$WEBHOOK_PID" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

stop_webhook() {
  [[ -n ${WEBHOOK_PID:-} ]] || return 0
  kill -TERM "$WEBHOOK_PID" 2>/dev/null
  wait "$WEBHOOK_PID" 2>/dev/null
  WEBHOOK_PID=
}
