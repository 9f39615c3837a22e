#!/usr/bin/env bash
# The CI integrations, run here as far as this machine allows: action.yml's declared
# structure, then its steps' shell run the way the Actions runner would (inputs and
# github.action_path substituted, GITHUB_OUTPUT/GITHUB_PATH files) on a sample workspace;
# the GitLab template's script run by sh with its variables (also where it pip-installs the
# wheel); the install step from a wheel (a local index standing in for PyPI); the pre-commit
# hooks' image and the documented release tag follow the project version.
#
# Not run here: the `deb:` install (apt-get on this machine), the build-from-source install
# (a second full build), GitHub's `uses:` resolution and upload-sarif, a GitLab runner, and
# the docker_image hook (no Docker daemon).
#
#   test/ship/integrations_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=integrations
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
PY=$(python_with yaml)
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
[[ -n $PY ]] || { skip "python3 with PyYAML not found"; finish; }

# ---- action.yml: what it declares ---------------------------------------------------------------
"$PY" - "$REPO" >"$SHIP_TMP/action.log" 2>&1 <<'PYEOF'
import os, re, sys, yaml
repo = sys.argv[1]
a = yaml.safe_load(open(f"{repo}/action.yml"))
def check(ok, what): print(("ok - " if ok else "FAIL - ") + what)
check(a.get("runs", {}).get("using") == "composite", "action.yml is a composite action")
steps = a["runs"].get("steps", [])
check(all(s.get("shell") == "bash" for s in steps if "run" in s), "every run step names its shell (composite actions must)")
inputs = set(a.get("inputs", {}))
used = set()
for s in steps:
    text = yaml.safe_dump(s)
    used |= set(re.findall(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}", text))
    for script in re.findall(r"\$\{?\{?\s*github\.action_path\s*\}?\}?/([^\"' ]+\.sh)|\$GPUGUARD_SOURCE/([^\"' ]+\.sh)", text):
        path = next(p for p in script if p)
        check(os.path.isfile(f"{repo}/{path}"), f"the step script {path} exists")
check(used <= inputs, f"every input a step uses is declared (undeclared: {sorted(used - inputs)})")
check(inputs <= used, f"every declared input is used (unused: {sorted(inputs - used)})")
ids = {s.get("id") for s in steps}
for name, o in a.get("outputs", {}).items():
    m = re.search(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", o.get("value", ""))
    check(m and m.group(1) in ids, f"output {name} comes from a step of the action")
check(a["inputs"]["sarif-file"].get("default", "").endswith(".sarif"), "SARIF goes to a .sarif file by default")
PYEOF
report_lines "" "$SHIP_TMP/action.log"

LINT=$(find_binary "$BUILD" gpuguard-lint)
if [[ -z $LINT ]]; then
  skip "running the action's steps: no gpuguard-lint in $BUILD"
else
  # A workspace like a user's repository.
  WS=$SHIP_TMP/workspace
  mkdir -p "$WS/deploy" "$WS/clean"
  cp "$REPO/manifests/examples/bad-fractional.yaml" "$REPO/manifests/examples/good-pod.yaml" "$WS/deploy/"
  cp "$REPO/manifests/examples/good-pod.yaml" "$WS/clean/"

  # run_action_step INDEX KEY=VALUE... : step INDEX of action.yml as the runner runs it, with
  # those inputs (the others at their defaults). Output in $SHIP_TMP/step.out, status in $STEP_RC,
  # step outputs in $SHIP_TMP/github_output.
  run_action_step() {
    local index=$1; shift
    : >"$SHIP_TMP/github_output"
    "$PY" - "$REPO" "$index" "$@" >"$SHIP_TMP/step.sh" <<'PYEOF'
import re, shlex, sys, yaml
repo, index, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
a = yaml.safe_load(open(f"{repo}/action.yml"))
values = {k: str(v.get("default", "")) for k, v in a["inputs"].items()}
values.update(p.split("=", 1) for p in pairs)
def expand(text):
    text = re.sub(r"\$\{\{\s*github\.action_path\s*\}\}", repo, text)
    return re.sub(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}", lambda m: values[m.group(1)], text)
step = a["runs"]["steps"][index]
for k, v in (step.get("env") or {}).items():
    print(f"export {k}={shlex.quote(expand(str(v)))}")
print(expand(step["run"]))
PYEOF
    STEP_RC=0
    (cd "$WS" && GITHUB_OUTPUT=$SHIP_TMP/github_output GITHUB_PATH=$SHIP_TMP/github_path RUNNER_TEMP=$SHIP_TMP \
      PATH=${STEP_PATH:-$BUILD:$PATH} bash -e "$SHIP_TMP/step.sh") >"$SHIP_TMP/step.out" 2>&1 || STEP_RC=$?
  }
  output() { sed -n "s/^$1=//p" "$SHIP_TMP/github_output"; }

  run_action_step 0
  check "install step: uses the gpuguard-lint on PATH (exit $STEP_RC)" test "$STEP_RC" -eq 0
  check "install step: prints the version" grep -q "^gpuguard-lint $version (commit " "$SHIP_TMP/step.out"

  # Without gpuguard-lint on PATH: the wheel, from a local index (PIP_FIND_LINKS) here, PyPI on a runner.
  WHEELS=$SHIP_TMP/wheels
  glibc=$(ldd --version 2>/dev/null | sed -n '1s/.* \([0-9]*\.[0-9]*\)$/\1/p')
  if [[ -n $glibc ]] && python3 -c 'import venv' 2>/dev/null &&
     python3 "$REPO/tools/make_wheel.py" --binary "$LINT" --dynamic "$glibc" --out "$WHEELS" >/dev/null; then
    nolint_path=$(tr ':' '\n' <<<"$PATH" | grep -vxF "$BUILD" | paste -sd:)
    export PIP_NO_INDEX=1 PIP_FIND_LINKS=$WHEELS
    : >"$SHIP_TMP/github_path"
    STEP_PATH=$nolint_path run_action_step 0
    check "install step without gpuguard-lint on PATH: pip installs gpuguard-lint==$version (exit $STEP_RC)" \
      grep -q "^gpuguard-lint $version (commit " "$SHIP_TMP/step.out"
    check "install step: ... and adds the virtualenv's bin to GITHUB_PATH" grep -q "gpuguard-venv/bin$" "$SHIP_TMP/github_path"
    rm -rf "$SHIP_TMP/gpuguard-venv"
    STEP_PATH=$nolint_path run_action_step 0 "wheel=$(ls "$WHEELS"/*.whl)"
    check "install step with wheel=FILE installs that wheel (exit $STEP_RC)" grep -q "^gpuguard-lint $version (commit " "$SHIP_TMP/step.out"
    unset PIP_NO_INDEX PIP_FIND_LINKS
  else
    skip "install step from the wheel: no python3 venv, or no glibc version to tag a test wheel with"
  fi

  run_action_step 1 "paths=deploy/"
  check "lint step: error findings fail the step (exit $STEP_RC)" test "$STEP_RC" -eq 1
  check "lint step: GitHub annotations in the log" grep -q "^::error file=deploy/bad-fractional.yaml,line=" "$SHIP_TMP/step.out"
  check "lint step: outputs exit-code=1" test "$(output exit-code)" = 1
  check "lint step: outputs errors=$(output errors) (at least one)" test "$(output errors)" -ge 1
  check "lint step: outputs sarif-file=gpuguard.sarif" test "$(output sarif-file)" = gpuguard.sarif
  if "$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["version"] == "2.1.0", s["version"]
results = s["runs"][0]["results"]
assert any(r["ruleId"] == "gpu-fractional" for r in results), results
uris = {l["physicalLocation"]["artifactLocation"]["uri"] for r in results for l in r["locations"]}
assert uris == {"deploy/bad-fractional.yaml"}, uris' "$WS/gpuguard.sarif" 2>"$SHIP_TMP/sarif.err"; then
    ok "lint step: the SARIF file is SARIF 2.1.0 with the gpu-fractional result at deploy/bad-fractional.yaml"
  else
    fail "lint step: SARIF: $(cat "$SHIP_TMP/sarif.err")"
  fi

  run_action_step 1 "paths=deploy/" "fail-on-findings=false" "sarif-file=out/report.sarif"
  check "lint step: fail-on-findings=false passes with findings (exit $STEP_RC)" test "$STEP_RC" -eq 0
  check "lint step: ... still says exit-code=1" test "$(output exit-code)" = 1
  check "lint step: sarif-file in a directory that does not exist yet is written" test -s "$WS/out/report.sarif"

  run_action_step 1 "paths=clean/
deploy/good-pod.yaml" "sarif-file=clean.sarif"
  check "lint step: clean paths (newline-separated) pass (exit $STEP_RC)" test "$STEP_RC" -eq 0
  check "lint step: ... errors=0" test "$(output errors)" = 0
  check "lint step: ... and the SARIF file exists" test -s "$WS/clean.sarif"

  run_action_step 1 "paths=no-such-dir" "fail-on-findings=false"
  check "lint step: unreadable input fails even with fail-on-findings=false (exit $STEP_RC)" test "$STEP_RC" -eq 2

  printf 'rules:\n  gpu-fractional: warning\n' >"$WS/relaxed.yaml"
  run_action_step 1 "paths=deploy/" "config=relaxed.yaml"
  check "lint step: config= is passed on (gpu-fractional relaxed to a warning: exit $STEP_RC)" test "$STEP_RC" -eq 0

  # ---- the GitLab template's job script, by sh ----------------------------------------------------
  run_gitlab() { # run_gitlab VAR=VALUE... : the job's script; status in $GL_RC
    "$PY" - "$REPO/integrations/gitlab/gpuguard.gitlab-ci.yml" "$@" >"$SHIP_TMP/gl.sh" <<'PYEOF'
import shlex, sys, yaml
t = yaml.safe_load(open(sys.argv[1]))
variables = dict(t.get("variables", {}))
variables.update(p.split("=", 1) for p in sys.argv[2:])
for k, v in variables.items():
    print(f"{k}={shlex.quote(str(v))}; export {k}")
# GitLab runs the script lines in one shell and stops at the first failing line.
print("\n".join(t["gpuguard-lint"]["script"]))
PYEOF
    GL_RC=0
    (cd "$WS" && PATH=${GL_PATH:-$BUILD:$PATH} sh -e "$SHIP_TMP/gl.sh") >"$SHIP_TMP/gl.out" 2>&1 || GL_RC=$?
  }
  if command -v sh >/dev/null; then
    run_gitlab "GPUGUARD_PATHS=deploy/"
    check "GitLab job: error findings fail the job (exit $GL_RC)" test "$GL_RC" -eq 1
    check "GitLab job: the findings are in the log" grep -q "deploy/bad-fractional.yaml:.*\[gpu-fractional\]" "$SHIP_TMP/gl.out"
    check "GitLab job: the JUnit report is XML naming the finding" \
      "$PY" -c 'import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); assert "gpu-fractional" in E.tostring(t.getroot(), encoding="unicode")' "$WS/gpuguard-junit.xml"
    rm -f "$WS/gpuguard-junit.xml"
    run_gitlab "GPUGUARD_PATHS=clean/" "GPUGUARD_CONFIG=relaxed.yaml"
    check "GitLab job: clean paths pass, with GPUGUARD_CONFIG (exit $GL_RC)" test "$GL_RC" -eq 0
    check "GitLab job: ... and write the report" test -s "$WS/gpuguard-junit.xml"
    if [[ -d ${WHEELS:-} ]] && python3 -m venv "$SHIP_TMP/gl-python" >/dev/null 2>&1; then
      # The job's image has Python and no gpuguard-lint: the script pip-installs the wheel.
      PIP_NO_INDEX=1 PIP_FIND_LINKS=$WHEELS GL_PATH=$SHIP_TMP/gl-python/bin:$nolint_path run_gitlab "GPUGUARD_PATHS=deploy/"
      check "GitLab job without gpuguard-lint: pip installs gpuguard-lint==$version, then lints (exit $GL_RC)" \
        test "$GL_RC" -eq 1 -a -x "$SHIP_TMP/gl-python/bin/gpuguard-lint"
      check "GitLab job: ... GPUGUARD_VERSION is the project version" grep -qx "  GPUGUARD_VERSION: \"$version\"" "$REPO/integrations/gitlab/gpuguard.gitlab-ci.yml"
    fi
  fi
fi

# ---- the hooks file, as pre-commit reads it ----------------------------------------------------------
if command -v pre-commit >/dev/null; then
  check "pre-commit validate-manifest accepts .pre-commit-hooks.yaml (both hooks)" \
    quiet pre-commit validate-manifest "$REPO/.pre-commit-hooks.yaml"
else
  skip "pre-commit not installed: validate-manifest not run"
fi

# ---- versions and tags -----------------------------------------------------------------------------
repository=$(sed -n 's/^GPUGUARD_IMAGE_REPOSITORY=//p' "$REPO/tools/release.env")
check "the docker_image pre-commit hook runs $repository:$version (tools/release.env)" \
  grep -qxF "  entry: --entrypoint /usr/local/bin/gpuguard-lint $repository:$version" "$REPO/.pre-commit-hooks.yaml"
check "the GitLab template installs gpuguard-lint==$version (GPUGUARD_VERSION)" \
  grep -qxF "  GPUGUARD_VERSION: \"$version\"" "$REPO/integrations/gitlab/gpuguard.gitlab-ci.yml"
stale=$(grep -rhoE '(rev: |@|ref: )v[0-9]+\.[0-9]+\.[0-9]+' "$REPO/docs/ci.md" "$REPO/action.yml" "$REPO/.pre-commit-hooks.yaml" \
  "$REPO/integrations" 2>/dev/null | grep -v "v$version\$" | sort -u | tr '\n' ' ')
check "docs and templates name the release tag v$version${stale:+ (not: $stale)}" test -z "$stale"
if git -C "$REPO" rev-parse -q --verify "refs/tags/v$version" >/dev/null 2>&1; then
  hooks=$(git -C "$REPO" show "v$version:.pre-commit-hooks.yaml" 2>/dev/null)
  check "tag v$version carries both pre-commit hooks" grep -q "id: gpuguard-lint-docker" <<<"$hooks"
  check "tag v$version carries action.yml" quiet git -C "$REPO" cat-file -e "v$version:action.yml"
else
  skip "tag v$version does not exist yet (CHANGELOG.md, Releasing: git tag -a v$version)"
fi

finish
