#!/usr/bin/env bash
# The README's first contact, as a new user meets it:
#   * every ```console block that runs build/gpuguard-lint shows the real output: the
#     command runs from the repository root and its output (stdout and stderr) must be
#     the lines under it, byte for byte;
#   * the first command fails when the build fails (a failing build.sh, stubbed in a
#     copy of the line, must make the whole line fail), and passes on the examples;
#   * the first command compiles the two tools only, not the test suite: build.sh, run
#     with a cmake that records its arguments, configures a fresh build directory
#     without the tests and builds only gpuguard-lint and gpuguard-webhook (--tests
#     and GPUGUARD_BUILD_TESTS=ON, what ./test.sh uses, build everything).
#
#   test/lint/readme_test.sh [BUILD_DIR]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
[[ -x $BUILD/gpuguard-lint ]] || { echo "FAIL: $BUILD/gpuguard-lint is not built"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

# --- console samples -------------------------------------------------------------------
python3 - "$REPO/README.md" "$TMP" <<'PY'
import sys, re, pathlib
text = pathlib.Path(sys.argv[1]).read_text()
out = pathlib.Path(sys.argv[2])
n = 0
for block in re.findall(r"```console\n(.*?)```", text, re.S):
    lines = block.splitlines()
    cmd, expected = None, []
    for line in lines + ["$ "]:
        if line.startswith("$ "):
            if cmd and cmd.startswith("build/gpuguard-lint"):
                n += 1
                (out / f"sample{n}.cmd").write_text(cmd)
                (out / f"sample{n}.expected").write_text("".join(l + "\n" for l in expected))
            cmd, expected = line[2:], []
        else:
            expected.append(line)
(out / "count").write_text(str(n))
PY
count=$(cat "$TMP/count")
[[ $count -ge 1 ]] || { echo "FAIL: no console sample of build/gpuguard-lint in README.md"; failures=$((failures + 1)); }
for ((i = 1; i <= count; i++)); do
  cmd=$(cat "$TMP/sample$i.cmd")
  (cd "$REPO" && PATH="$TMP/nobin" "$BASH" -c "${cmd/#build\//$BUILD/}" > "$TMP/sample$i.actual" 2>&1)
  if diff -u "$TMP/sample$i.expected" "$TMP/sample$i.actual"; then
    echo "ok: README sample \`$cmd\` is the real output"
  else
    echo "FAIL: README sample \`$cmd\` differs from the real output (diff above: - README, + real)"
    failures=$((failures + 1))
  fi
done

# --- the first command -----------------------------------------------------------------
first=$(awk '/^```sh$/{getline; print; exit}' "$REPO/README.md" | sed 's/[[:space:]]*#.*$//')
echo "first command: $first"
[[ $first == ./build.sh* ]] || { echo "FAIL: the README's first command does not start with ./build.sh"; failures=$((failures + 1)); }
mkdir -p "$TMP/broken/build" "$TMP/ok/build"
cp -r "$REPO/manifests" "$TMP/broken/" && cp -r "$REPO/manifests" "$TMP/ok/"
printf '#!/bin/sh\necho "CMake Error: configure failed" >&2\nexit 1\n' > "$TMP/broken/build.sh"
printf '#!/bin/sh\nexit 0\n' > "$TMP/ok/build.sh"
chmod +x "$TMP/broken/build.sh" "$TMP/ok/build.sh"
ln -s "$BUILD/gpuguard-lint" "$TMP/broken/build/gpuguard-lint"
ln -s "$BUILD/gpuguard-lint" "$TMP/ok/build/gpuguard-lint"
if (cd "$TMP/broken" && bash -c "$first") >/dev/null 2>&1; then
  echo "FAIL: the first command passes although build.sh failed"; failures=$((failures + 1))
else
  echo "ok: the first command fails when the build fails"
fi
if (cd "$TMP/ok" && bash -c "$first") >/dev/null 2>&1; then
  echo "ok: the first command passes when the build does (the examples' findings are intended)"
else
  echo "FAIL: the first command fails on a good build"; failures=$((failures + 1))
fi

# --- what ./build.sh compiles ----------------------------------------------------------
mkdir -p "$TMP/fakebin"
printf '#!/bin/sh\necho "cmake $*" >>"%s"\n' "$TMP/cmake.log" >"$TMP/fakebin/cmake"
chmod +x "$TMP/fakebin/cmake"
# build_sh_calls ARGS... : the cmake calls of ./build.sh ARGS in a fresh build directory
build_sh_calls() {
  : >"$TMP/cmake.log"
  (cd "$REPO" && PATH="$TMP/fakebin:$PATH" BUILD_DIR="$TMP/fresh-build" ./build.sh "$@") >/dev/null 2>&1
  cat "$TMP/cmake.log"
}
calls=$(build_sh_calls)
if [[ $calls == *"-DGPUGUARD_BUILD_TESTS=OFF"* && $calls == *"--target gpuguard-lint gpuguard-webhook"* ]]; then
  echo "ok: ./build.sh configures without the tests and builds only the two tools"
else
  echo "FAIL: ./build.sh builds more than the two tools: $calls"; failures=$((failures + 1))
fi
calls=$(build_sh_calls --tests)
if [[ $calls == *"-DGPUGUARD_BUILD_TESTS=ON"* && $calls != *"--target"* ]]; then
  echo "ok: ./build.sh --tests builds everything, the tests included"
else
  echo "FAIL: ./build.sh --tests: $calls"; failures=$((failures + 1))
fi
grep -q '^\./build\.sh --tests$' "$REPO/test.sh" && echo "ok: ./test.sh builds the tests (./build.sh --tests)" ||
  { echo "FAIL: test.sh does not run ./build.sh --tests"; failures=$((failures + 1)); }

[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all README checks passed"
