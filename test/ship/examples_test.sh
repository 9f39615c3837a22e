#!/usr/bin/env bash
# manifests/examples: gpuguard-lint, with the policy the webhook ships with
# (manifests/base/policy.yaml), reports exactly the findings each example
# states in its "# expect: <rule>" comments: same rules, same lines.
#
#   test/ship/examples_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=examples
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
LINT=$(find_binary "$BUILD" gpuguard-lint)
if [[ -z $LINT ]]; then
  if cmake_defines_target "$BUILD" gpuguard-lint; then
    fail "gpuguard-lint is a CMake target in $BUILD but is not built"
  else
    skip "no gpuguard-lint in $BUILD"
  fi
  finish
fi
command -v python3 >/dev/null || { skip "python3 not found"; finish; }

cd "$SHIP_TMP" || exit 1   # no .gpuguard.yaml from the checkout: the policy is named
python3 "$SHIP_HERE/check_examples.py" "$LINT" "$REPO/manifests/base/policy.yaml" "$REPO/manifests/examples" \
  >"$SHIP_TMP/examples.log" 2>&1
while IFS= read -r line; do
  case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "FAIL - "*) fail "${line#FAIL - }" ;;
    *) fail "check_examples.py: $line" ;;
  esac
done <"$SHIP_TMP/examples.log"

finish
