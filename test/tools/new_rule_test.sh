#!/usr/bin/env bash
# tools/new-rule.sh, on a copy of the sources it writes into: a new rule gets its
# check file, its test file and its one registration line, and all three compile
# against the real headers (g++ -fsyntax-only: the registry with the new line, the
# check, its test); an id that is not one, or one already taken, is refused and
# nothing is written. Exit 77 (skipped) without g++ or GoogleTest's headers.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v g++ >/dev/null && [[ -f /usr/include/gtest/gtest.h ]] || { echo "no g++ or gtest headers: skipped"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/test/unit/rules"
cp -r "$ROOT/rules" "$ROOT/text" "$ROOT/yaml" "$work/"
cp -r "$ROOT/test/unit/rules/checks" "$work/test/unit/rules/"
cp "$ROOT/test/unit/test_support.h" "$work/test/unit/"

failures=0
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
new_rule() { GPUGUARD_ROOT=$work "$ROOT/tools/new-rule.sh" "$@" >"$work/out.txt" 2>&1; }
snapshot() { (cd "$work" && find rules test -type f | LC_ALL=C sort | xargs md5sum); }

# --- an id that is not one, or is taken: refused, nothing written ----------------------
before=$(snapshot)
for bad in gpu Gpu-Bad gpu_bad -gpu-bad gpu--bad "gpu bad" gpu-fractional; do
  if new_rule "$bad"; then fail "accepted the id \"$bad\""; fi
done
grep -q "already" "$work/out.txt" || fail "a taken id is not refused as taken: $(cat "$work/out.txt")"
[[ $(snapshot) == "$before" ]] || fail "a refused id changed files"

# --- a new rule: three files, one line each where it is registered ------------------------
new_rule gpu-example-scaffold --severity warning --judges what-is-written || fail "new rule: $(cat "$work/out.txt")"
check=$work/rules/checks/gpu_example_scaffold.cpp
test=$work/test/unit/rules/checks/gpu_example_scaffold_test.cpp
[[ -f $check ]] || fail "no check file"
[[ -f $test ]] || fail "no test file"
grep -qF '.id = "gpu-example-scaffold"' "$check" || fail "the check does not carry its id"
grep -qF 'Severity::Warning' "$check" || fail "the check does not carry --severity warning"
grep -qF 'onlyRules({"gpu-example-scaffold"})' "$test" || fail "the test does not name its rule"
[[ $(tail -n 1 "$work/rules/checks/registered.inc") == "GPUGUARD_RULE(GpuExampleScaffold, WhatIsWritten)" ]] ||
  fail "registered.inc does not end with the new line: $(tail -n 1 "$work/rules/checks/registered.inc")"
[[ $(grep -c "GpuExampleScaffold" "$work/rules/checks/registered.inc") == 1 ]] || fail "registered more than once"
if new_rule gpu-example-scaffold; then fail "the same id twice was accepted"; fi

# --- what it wrote compiles against the real headers --------------------------------------
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$work" -DGPUGUARD_SOURCE_DIR="\"$work\"")
for source in "$work/rules/registry.cpp" "$check" "$test"; do
  g++ "${flags[@]}" "$source" 2>"$work/cc.txt" || fail "${source#"$work"/} does not compile: $(head -20 "$work/cc.txt")"
done

if ((failures)); then exit 1; fi
echo "new-rule.sh: refuses bad and taken ids; writes a check, a test and one registration line that compile"
