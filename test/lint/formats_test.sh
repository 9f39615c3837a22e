#!/usr/bin/env bash
# gpuguard-lint's machine-readable formats checked by outside tools:
#   * --format sarif validates against the official SARIF 2.1.0 JSON schema
#     (sarif-2.1.0-rtm.5.json, from the npm package @microsoft/jest-sarif,
#     fetched once into BUILD_DIR/sarif-schema; never committed), with
#     python3-jsonschema;
#   * --format junit is well-formed XML whose counts add up.
# Exit 77 (skipped) when npm, the registry or jsonschema is unavailable.
#
#   test/lint/formats_test.sh [BUILD_DIR]     (default: build)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
LINT=$BUILD/gpuguard-lint
[[ -x $LINT ]] || { echo "FAIL: $LINT is not built"; exit 1; }

PY=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import jsonschema' 2>/dev/null; then
    PY=$candidate
    break
  fi
done
[[ -n $PY ]] || { echo "SKIP: no python3 with jsonschema (apt-get install python3-jsonschema)"; exit 77; }

SCHEMA_DIR=$BUILD/sarif-schema
SCHEMA=$SCHEMA_DIR/package/lib/schemas/sarif-2.1.0-rtm.5.json
if [[ ! -s $SCHEMA ]]; then
  command -v npm >/dev/null || { echo "SKIP: npm not found, cannot fetch the SARIF schema"; exit 77; }
  mkdir -p "$SCHEMA_DIR"
  if ! (cd "$SCHEMA_DIR" && timeout 180 npm pack --silent @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null 2>&1); then
    echo "SKIP: npm pack @microsoft/jest-sarif@1.0.0-beta.0 failed (no registry?)"
    exit 77
  fi
  tar -xzf "$SCHEMA_DIR"/microsoft-jest-sarif-1.0.0-beta.0.tgz -C "$SCHEMA_DIR" package/lib/schemas/sarif-2.1.0-rtm.5.json ||
    { echo "FAIL: the package has no package/lib/schemas/sarif-2.1.0-rtm.5.json"; exit 1; }
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
mkdir -p "deploy/with space" empty
cp "$REPO"/manifests/examples/*.yaml deploy/
cat > "deploy/with space/suppressed é.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: shared
  annotations:
    ignore.gpuguard.io/gpu-fractional: "HAMi <shares> this GPU & more"
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: "0.5"}}
YAML
printf 'apiVersion: v1\nkind: Pod\nspec:\n\tcontainers: []\n' > deploy/tab.yaml
printf 'a: [\x01\n' > deploy/control.yaml

run() {  # name, then arguments
  local name=$1
  shift
  "$LINT" "$@" >"$name" 2>/dev/null <"$TMP/stdin.yaml"
  echo "$name exit $?"
}
cp deploy/bad-fractional.yaml stdin.yaml
{
  run all.sarif --format sarif deploy
  run stdin.sarif --format sarif -
  run empty.sarif --format sarif empty
  run abs.sarif --format sarif "$TMP/deploy/bad-fractional.yaml"
  run all.xml --format junit deploy -
  run empty.xml --format junit empty
} >exits.txt

"$PY" - "$SCHEMA" <<'PY'
import json, sys, xml.etree.ElementTree as ET
import jsonschema

schema = json.load(open(sys.argv[1]))
Validator = jsonschema.validators.validator_for(schema)
Validator.check_schema(schema)
failures = 0
def check(ok, what):
    global failures
    print(("ok - " if ok else "FAIL - ") + what)
    if not ok:
        failures += 1

for name in ["all.sarif", "stdin.sarif", "empty.sarif", "abs.sarif"]:
    log = json.load(open(name))
    errors = sorted(Validator(schema, format_checker=jsonschema.FormatChecker()).iter_errors(log), key=str)
    for e in errors[:5]:
        print("   %s at %s" % (e.message, "/".join(map(str, e.absolute_path))))
    check(not errors, "%s is valid SARIF 2.1.0 (%d results)" % (name, len(log["runs"][0]["results"])))
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for r in run["results"]:
        if rules[r["ruleIndex"]]["id"] != r["ruleId"]:
            check(False, "%s: ruleIndex points at the wrong rule" % name)

log = json.load(open("all.sarif"))
run = log["runs"][0]
uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
check("deploy/with%20space/suppressed%20%C3%A9.yaml" in uris, "relative, percent-encoded uris")
check(any(r.get("suppressions") for r in run["results"]), "suppressed findings are results with suppressions")
fixed = [r for r in run["results"] if r.get("fixes")]
check(any(r["ruleId"] == "gpu-requests-without-limits" for r in fixed),
      "a finding --fix fixes carries its fix (fixes[].artifactChanges[].replacements)")
check(all(c["artifactLocation"] == r["locations"][0]["physicalLocation"]["artifactLocation"]
          for r in fixed for c in r["fixes"][0]["artifactChanges"]), "a fix changes the result's own file")
notes = run["invocations"][0].get("toolExecutionNotifications", [])
check(len(notes) == 2 and run["invocations"][0]["executionSuccessful"] is False,
      "unparsable inputs are tool execution notifications")
stdin = json.load(open("stdin.sarif"))["runs"][0]["results"]
check(stdin and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stdin" for r in stdin),
      "stdin is the uri 'stdin'")

for name in ["all.xml", "empty.xml"]:
    try:
        root = ET.parse(name).getroot()
    except ET.ParseError as e:
        check(False, "%s is well-formed XML: %s" % (name, e))
        continue
    check(root.tag == "testsuites", "%s: root element testsuites" % name)
    suites = root.findall("testsuite")
    for attr in ["tests", "failures", "errors", "skipped"]:
        total = sum(int(s.get(attr)) for s in suites)
        check(int(root.get(attr)) == total, "%s: testsuites %s=%s adds up" % (name, attr, root.get(attr)))
    for s in suites:
        cases = s.findall("testcase")
        ok = (int(s.get("tests")) == len(cases)
              and int(s.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
              and int(s.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
              and int(s.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None))
        if not ok:
            check(False, "%s: counts of testsuite %s" % (name, s.get("name")))
xml = ET.parse("all.xml").getroot()
names = [s.get("name") for s in xml.findall("testsuite")]
check("<stdin>" in names and "deploy/with space/suppressed \u00e9.yaml" in names, "one testsuite per file")
check(any(c.find("skipped") is not None and "HAMi <shares> this GPU & more" in c.find("skipped").get("message")
          for c in xml.iter("testcase")), "suppressed findings are skipped testcases, escaped")
check(sum(1 for c in xml.iter("testcase") if c.find("error") is not None) == 2, "input errors are <error>s")
print("%d failed" % failures)
sys.exit(1 if failures else 0)
PY
status=$?
cat exits.txt
exit $status
