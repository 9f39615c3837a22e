#!/usr/bin/env bash
# .pre-commit-hooks.yaml, exercised on a sample repository: the hook's entry
# runs on the files pre-commit would pass it (those matching `files:`), and
# fails the commit on a GPU mistake. When the pre-commit tool is installed,
# `pre-commit try-repo` runs the hook from this checkout for real.
#
#   test/lint/precommit_test.sh [BUILD_DIR]     (default: build)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
[[ -x $BUILD/gpuguard-lint ]] || { echo "FAIL: gpuguard-lint is not built in $BUILD"; exit 1; }
command -v git >/dev/null || { echo "SKIP: git not found"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
export PATH=$BUILD:$PATH  # language: system (the binary is BUILD/gpuguard-lint)
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid

failures=0
ok() { echo "ok - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

# The hook as declared (one hook; plain "key: value" lines).
read -r ID ENTRY LANGUAGE FILES < <(python3 - "$REPO/.pre-commit-hooks.yaml" <<'PY'
import re, sys
hook = {}
for line in open(sys.argv[1]):
    m = re.match(r"^-?\s*(id|entry|language|files):\s*(.*?)\s*$", line)
    if m:
        hook[m.group(1)] = m.group(2)
print(hook.get("id", ""), hook.get("entry", ""), hook.get("language", ""), hook.get("files", ""))
PY
)
[[ $ID == gpuguard-lint ]] && ok "hook id gpuguard-lint" || fail "hook id is '$ID'"
[[ $ENTRY == gpuguard-lint ]] && ok "entry gpuguard-lint" || fail "entry is '$ENTRY'"
[[ $LANGUAGE == system || $LANGUAGE == script ]] && ok "language $LANGUAGE" || fail "language is '$LANGUAGE'"

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
  export PRE_COMMIT_HOME=$TMP/pre-commit-home
  git init -q "$TMP/hooks" && cp "$REPO/.pre-commit-hooks.yaml" "$TMP/hooks/" &&
    git -C "$TMP/hooks" add .pre-commit-hooks.yaml && git -C "$TMP/hooks" commit -qm hooks
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
else
  echo "# pre-commit not installed: try-repo not run"
fi

echo "$failures failed"
[[ $failures == 0 ]]
