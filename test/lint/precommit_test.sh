#!/usr/bin/env bash
# .pre-commit-hooks.yaml, exercised on a sample repository: the hook's entry
# runs on the files pre-commit would pass it (those matching `files:`), and
# fails the commit on a GPU mistake. When the pre-commit tool is installed,
# `pre-commit try-repo` runs the hook from this checkout for real: language
# python, so pre-commit pip-installs this repository (pyproject.toml), which pulls
# the gpuguard-lint wheel; a local index (PIP_FIND_LINKS, a wheel of the built
# binary) stands in for PyPI, and the build directory is not on PATH then.
#
#   test/lint/precommit_test.sh [BUILD_DIR]     (default: build)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
[[ -x $BUILD/gpuguard-lint ]] || { echo "FAIL: gpuguard-lint is not built in $BUILD"; exit 1; }
command -v git >/dev/null || { echo "SKIP: git not found"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
export PATH=$BUILD:$PATH  # language: system (the binary is $BUILD/gpuguard-lint)
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid

failures=0
ok() { echo "ok - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

# The first hook as declared (plain "key: value" lines).
read -r ID ENTRY LANGUAGE FILES < <(python3 - "$REPO/.pre-commit-hooks.yaml" <<'PY'
import re, sys
hook = {}
for line in open(sys.argv[1]):
    if line.startswith("- id:") and hook:
        break  # the first hook only (gpuguard-lint; the docker variant follows)
    m = re.match(r"^-?\s*(id|entry|language|files):\s*(.*?)\s*$", line)
    if m:
        hook[m.group(1)] = m.group(2)
print(hook.get("id", ""), hook.get("entry", ""), hook.get("language", ""), hook.get("files", ""))
PY
)
[[ $ID == gpuguard-lint ]] && ok "hook id gpuguard-lint" || fail "hook id is '$ID'"
[[ $ENTRY == gpuguard-lint ]] && ok "entry gpuguard-lint" || fail "entry is '$ENTRY'"
[[ $LANGUAGE == python ]] && ok "language python (pre-commit installs the wheel; no compiler)" || fail "language is '$LANGUAGE'"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
git init -q sample && cd sample || exit 1
mkdir -p deploy chart/templates .github/workflows
cp "$REPO/manifests/examples/good-pod.yaml" deploy/good.yaml
cp "$REPO/manifests/examples/bad-fractional.yaml" deploy/bad.yaml
printf 'replicas: 2\nimage: {tag: latest}\n' > chart/values.yaml
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n{{- if .Values.gpu }}\n' > chart/templates/pod.yaml
printf 'on: push\njobs: {}\n' > .github/workflows/ci.yml
printf '# notes\n' > README.md
printf 'exclude: ["chart/templates/**"]\n' > .gpuguard.yaml
git add -A

# The files pre-commit would pass: tracked files matching `files:`.
mapfile -t files < <(git ls-files | python3 -c '
import re, sys
pattern = re.compile(sys.argv[1])
for f in sys.stdin.read().split("\n"):
    if f and pattern.search(f):
        print(f)' "$FILES")
[[ " ${files[*]} " == *" deploy/bad.yaml "* && " ${files[*]} " != *" README.md "* ]] &&
  ok "files: selects the manifests (${#files[@]} files)" || fail "files: selected ${files[*]}"

out=$($ENTRY "${files[@]}" 2>&1)
status=$?
[[ $status == 1 ]] && ok "the hook fails on a bad manifest (exit 1)" || fail "exit $status on a bad manifest: $out"
[[ $out == *"deploy/bad.yaml:"*"[gpu-fractional]"* ]] && ok "it names file, line and rule" || fail "output: $out"
[[ $out != *"chart/templates"* ]] && ok "templates excluded by .gpuguard.yaml" || fail "templates linted: $out"

git rm -q --cached deploy/bad.yaml && rm deploy/bad.yaml
files=("${files[@]/deploy\/bad.yaml/}")
out=$($ENTRY ${files[@]} 2>&1)
status=$?
[[ $status == 0 ]] && ok "the hook passes once the manifest is gone (exit 0)" || fail "exit $status: $out"

if command -v pre-commit >/dev/null; then
  # A hook repository holding this checkout's .pre-commit-hooks.yaml (as
  # committed or not), so try-repo sees exactly the file under test.
  # With what `pip install .` reads: pyproject.toml, its in-tree backend, the version.
  export PRE_COMMIT_HOME=$TMP/pre-commit-home
  git init -q "$TMP/hooks" && mkdir -p "$TMP/hooks/packaging" &&
    cp "$REPO/.pre-commit-hooks.yaml" "$REPO/pyproject.toml" "$REPO/CMakeLists.txt" "$REPO/LICENSE" "$TMP/hooks/" &&
    cp -r "$REPO/packaging/pre-commit" "$TMP/hooks/packaging/" &&
    git -C "$TMP/hooks" add -A && git -C "$TMP/hooks" commit -qm hooks
  glibc=$(ldd --version 2>/dev/null | sed -n '1s/.* \([0-9]*\.[0-9]*\)$/\1/p')
  python3 "$REPO/tools/make_wheel.py" --binary "$BUILD/gpuguard-lint" --dynamic "$glibc" --out "$TMP/wheels" >/dev/null ||
    fail "tools/make_wheel.py could not make a test wheel"
  export PIP_NO_INDEX=1 PIP_FIND_LINKS=$TMP/wheels
  PATH=$(tr ':' '\n' <<<"$PATH" | grep -vxF "$BUILD" | paste -sd:)
  cp "$REPO/manifests/examples/bad-requests-only.yaml" deploy/bad.yaml
  git add -A
  out=$(pre-commit try-repo "$TMP/hooks" gpuguard-lint --all-files 2>&1)
  status=$?
  [[ $status == 1 && $out == *"gpu-requests-without-limits"* ]] && ok "pre-commit try-repo runs the hook and fails" ||
    fail "pre-commit try-repo: exit $status: $out"
  git rm -q --cached deploy/bad.yaml && rm deploy/bad.yaml
  out=$(pre-commit try-repo "$TMP/hooks" gpuguard-lint --all-files 2>&1)
  status=$?
  [[ $status == 0 ]] && ok "pre-commit try-repo passes on good manifests" || fail "pre-commit try-repo: exit $status: $out"
  # As a user has it: .pre-commit-config.yaml names the hook repository at a commit (no tag),
  # and `pre-commit run` checks the staged files.
  rev=$(git -C "$TMP/hooks" rev-parse HEAD)
  printf 'repos:\n- repo: %s\n  rev: %s\n  hooks:\n  - id: gpuguard-lint\n' "$TMP/hooks" "$rev" >.pre-commit-config.yaml
  cp "$REPO/manifests/examples/bad-fractional.yaml" deploy/staged.yaml
  git add .pre-commit-config.yaml deploy/staged.yaml
  out=$(pre-commit run gpuguard-lint 2>&1)
  status=$?
  [[ $status == 1 && $out == *"deploy/staged.yaml:"*"[gpu-fractional]"* ]] &&
    ok "pre-commit run (rev: a commit id) lints the staged manifest and fails" || fail "pre-commit run: exit $status: $out"
  hook_bin=$(find "$PRE_COMMIT_HOME" -path '*/bin/gpuguard-lint' | head -n1)
  [[ -n $hook_bin && $("$hook_bin" --version) == "gpuguard-lint "* ]] &&
    ok "the hook's virtualenv holds gpuguard-lint from the wheel (${hook_bin#"$PRE_COMMIT_HOME"/})" ||
    fail "no gpuguard-lint in the hook's virtualenv"
else
  echo "# pre-commit not installed: try-repo not run"
fi

echo "$failures failed"
[[ $failures == 0 ]]
