#!/usr/bin/env bash
# The release tooling, fast enough for every ctest run (the full release build and the checks
# of its artifacts are tools/release.sh + test/ship/release_check.sh, run by .ci/run):
#   - tools/make_wheel.py and tools/make_oci_image.py on the built binaries: deterministic
#     (the same input twice gives the same bytes), a valid RECORD, the image config;
#   - one image name: every file that names the image names tools/release.env's, and
#     tools/set-image-repository.sh renames it everywhere in a copy of the checkout;
#   - cmake: --version's commit comes from -DGPUGUARD_COMMIT, from git, or is "unknown" without
#     git; GPUGUARD_STATIC refuses a configuration with the tests;
#   - the release workflow runs the same script and checks, and publishes only on a tag.
#
#   test/ship/release_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=release
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
LINT=$(find_binary "$BUILD" gpuguard-lint)
WEBHOOK=$(find_binary "$BUILD" gpuguard-webhook)
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
repository=$(sed -n 's/^GPUGUARD_IMAGE_REPOSITORY=//p' "$REPO/tools/release.env")
check "tools/release.env names a fully qualified image repository ($repository)" \
  grep -qE '^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+){2,}$' <<<"$repository"
check "tools/release.sh parses (bash -n)" bash -n "$REPO/tools/release.sh"

# ---- the wheel -----------------------------------------------------------------------------------
if [[ -n $LINT ]]; then
  for i in 1 2; do
    SOURCE_DATE_EPOCH=1700000000 python3 "$REPO/tools/make_wheel.py" --binary "$LINT" --arch amd64 \
      --out "$SHIP_TMP/wheel$i" >/dev/null || fail "make_wheel.py failed"
  done
  w1=$(ls "$SHIP_TMP"/wheel1/*.whl 2>/dev/null) w2=$(ls "$SHIP_TMP"/wheel2/*.whl 2>/dev/null)
  check "make_wheel.py is deterministic (two runs, the same bytes)" cmp -s "$w1" "$w2"
  check "the wheel's name: gpuguard_lint-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl" \
    test "$(basename "$w1")" = "gpuguard_lint-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
  check "the wheel: RECORD hashes every file, the binary is executable in .data/scripts, WHEEL has the tag" \
    python3 - "$w1" "$version" <<'PY'
import base64, hashlib, sys, zipfile
path, version = sys.argv[1:]
z = zipfile.ZipFile(path)
info = f"gpuguard_lint-{version}.dist-info"
record = {l.split(",")[0]: l.split(",")[1] for l in z.read(f"{info}/RECORD").decode().splitlines()}
for name in z.namelist():
    if name == f"{info}/RECORD":
        continue
    digest = base64.urlsafe_b64encode(hashlib.sha256(z.read(name)).digest()).rstrip(b"=").decode()
    assert record[name] == "sha256=" + digest, name
script = z.getinfo(f"gpuguard_lint-{version}.data/scripts/gpuguard-lint")
assert (script.external_attr >> 16) & 0o111, oct(script.external_attr >> 16)
wheel = z.read(f"{info}/WHEEL").decode()
assert "Root-Is-Purelib: false" in wheel and "Tag: py3-none-manylinux_2_17_x86_64" in wheel, wheel
assert f"Version: {version}" in z.read(f"{info}/METADATA").decode()
PY
  check "make_wheel.py refuses a file that is not a binary" \
    not quiet python3 "$REPO/tools/make_wheel.py" --binary "$REPO/README.md" --out "$SHIP_TMP/nowheel"
else
  skip "the wheel: no gpuguard-lint in $BUILD"
fi

# ---- the image --------------------------------------------------------------------------------------
if [[ -n $LINT && -n $WEBHOOK ]]; then
  for i in 1 2; do
    SOURCE_DATE_EPOCH=1700000000 python3 "$REPO/tools/make_oci_image.py" --lint "$LINT" --webhook "$WEBHOOK" \
      --license "$REPO/LICENSE" --repository "$repository" --tag "$version" --revision 0123abc \
      --out "$SHIP_TMP/image$i" >"$SHIP_TMP/image$i.json" || fail "make_oci_image.py failed"
  done
  check "make_oci_image.py is deterministic (the same manifest digest and archive twice)" \
    cmp -s "$SHIP_TMP/image1/image.oci.tar" "$SHIP_TMP/image2/image.oci.tar"
  check "the image config: user 65532:65532, entrypoint gpuguard-webhook, PATH, port 8443, revision label" \
    python3 - "$SHIP_TMP/image1/layout" <<'PY'
import json, os, sys
layout = sys.argv[1]
blob = lambda d: open(os.path.join(layout, "blobs", *d.split(":")), "rb").read()
index = json.load(open(os.path.join(layout, "index.json")))
manifest = json.loads(blob(index["manifests"][0]["digest"]))
config = json.loads(blob(manifest["config"]["digest"]))
c = config["config"]
assert c["User"] == "65532:65532" and c["Entrypoint"] == ["/usr/local/bin/gpuguard-webhook"], c
assert c["Env"] == ["PATH=/usr/local/bin"] and "8443/tcp" in c["ExposedPorts"], c
assert c["Labels"]["org.opencontainers.image.revision"] == "0123abc", c["Labels"]
assert config["created"] == "2023-11-14T22:13:20Z", config["created"]
PY
else
  skip "the image: the binaries are not built in $BUILD"
fi

# ---- one image name -----------------------------------------------------------------------------------
# Every tracked file naming a gpuguard-webhook image with a tag names the release one (tests and the
# changelog aside); an unqualified one is what users could not pull.
others=$(git -C "$REPO" grep -nE '[a-z0-9./-]*gpuguard-webhook:[0-9]+\.[0-9]+' -- . ':!test/' ':!CHANGELOG.md' 2>/dev/null |
  grep -vE "(registry\.example\.com[^ ]*|REGISTRY|$repository)/?gpuguard-webhook:|$repository:" | head -n 5)
check "every tagged image name outside tests is $repository (or an example registry)${others:+: $others}" test -z "$others"
for f in manifests/base/deployment.yaml manifests/chart/gpuguard/values.yaml .pre-commit-hooks.yaml certs/make-certs.sh \
         docs/install.md docs/ci.md README.md; do
  check "$f names $repository" grep -qF "$repository" "$REPO/$f"
done
COPY=$SHIP_TMP/checkout
mkdir -p "$COPY"
(cd "$REPO" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$COPY"
git -C "$COPY" init -q && git -C "$COPY" add -A >/dev/null 2>&1
new=registry.example.org:5000/acme/gpuguard-webhook
if (cd "$COPY" && bash tools/set-image-repository.sh "$new") >"$SHIP_TMP/rename.log" 2>&1; then
  check "set-image-repository.sh rewrites tools/release.env" grep -qx "GPUGUARD_IMAGE_REPOSITORY=$new" "$COPY/tools/release.env"
  check "... the chart, the kustomize base, the hook and make-certs.sh" \
    grep -qF "$new" "$COPY/manifests/chart/gpuguard/values.yaml" "$COPY/manifests/base/deployment.yaml" "$COPY/.pre-commit-hooks.yaml" "$COPY/certs/make-certs.sh"
  check "... and leaves no file naming the old one" not quiet git -C "$COPY" grep -qF "$repository" -- . ':!CHANGELOG.md'
else
  fail "set-image-repository.sh: $(cat "$SHIP_TMP/rename.log")"
fi
check "set-image-repository.sh refuses a name that is not fully qualified" \
  not quiet bash -c "cd '$COPY' && bash tools/set-image-repository.sh gpuguard-webhook"

# ---- cmake: the commit in --version, the static option -------------------------------------------------
if command -v cmake >/dev/null && [[ -n $LINT ]]; then
  check "$(basename "$LINT") --version names version and commit" grep -qE "^gpuguard-lint $version \(commit [0-9a-f]{7,}(-dirty)?|unknown\)" <("$LINT" --version)
  configure() { # configure SRC DIR ARGS... : configure only; the version header in DIR/generated
    cmake -S "$1" -B "$2" -DGPUGUARD_BUILD_TESTS=OFF "${@:3}" >"$2.log" 2>&1
  }
  header() { sed -n 's/^#define GPUGUARD_COMMIT "\(.*\)"$/\1/p' "$1/generated/gpuguard_version.h"; }
  configure "$REPO" "$SHIP_TMP/cm-override" -DGPUGUARD_COMMIT=feedc0ffee12 &&
    check "-DGPUGUARD_COMMIT= sets the commit (a build from a tarball)" test "$(header "$SHIP_TMP/cm-override")" = feedc0ffee12
  rm -rf "$COPY/.git"
  if configure "$COPY" "$SHIP_TMP/cm-nogit"; then
    check "without git the commit is \"unknown\" and the configure succeeds" test "$(header "$SHIP_TMP/cm-nogit")" = unknown
  else
    fail "configure without git fails: $(tail -n 5 "$SHIP_TMP/cm-nogit.log")"
  fi
  if git -C "$REPO" rev-parse -q --verify HEAD >/dev/null && configure "$REPO" "$SHIP_TMP/cm-git"; then
    check "with git the commit is HEAD's ($(git -C "$REPO" rev-parse --short=12 HEAD))" \
      grep -q "^$(git -C "$REPO" rev-parse --short=12 HEAD)" <<<"$(header "$SHIP_TMP/cm-git")"
  fi
  check "GPUGUARD_STATIC=ON with the tests is refused" \
    not quiet cmake -S "$REPO" -B "$SHIP_TMP/cm-static" -DGPUGUARD_STATIC=ON -DGPUGUARD_BUILD_TESTS=ON
  if configure "$REPO" "$SHIP_TMP/cm-static2" -DGPUGUARD_STATIC=ON; then
    check "GPUGUARD_STATIC=ON links the static archives (libssl.a, libre2.a, libyaml-cpp.a) and -static" \
      bash -c "cmake --build '$SHIP_TMP/cm-static2' --target help >/dev/null && grep -rqs -- '-static' '$SHIP_TMP/cm-static2/lint/CMakeFiles/gpuguard-lint.dir/link.txt' && grep -qs 'libyaml-cpp.a' '$SHIP_TMP/cm-static2/lint/CMakeFiles/gpuguard-lint.dir/link.txt' && grep -qs 'libre2.a' '$SHIP_TMP/cm-static2/lint/CMakeFiles/gpuguard-lint.dir/link.txt' && grep -qs 'libssl.a' '$SHIP_TMP/cm-static2/webhook/CMakeFiles/gpuguard-webhook.dir/link.txt'"
  else
    fail "configure with GPUGUARD_STATIC=ON: $(tail -n 5 "$SHIP_TMP/cm-static2.log")"
  fi
else
  skip "cmake checks: no cmake, or gpuguard-lint not built"
fi

# ---- the release workflow -------------------------------------------------------------------------------
PY=$(python_with yaml)
if [[ -n $PY ]]; then
  check "release.yml: runs tools/release.sh and release_check.sh, publishes only on a tag, with provenance" \
    "$PY" - "$REPO/.github/workflows/release.yml" <<'PY'
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
on = w.get(True) or w.get("on")       # YAML 1.1 reads the key `on` as true
assert on["push"]["tags"] == ["v*"], on
build = "\n".join(s.get("run", "") for s in w["jobs"]["build"]["steps"])
assert "tools/release.sh dist" in build and "test/ship/release_check.sh dist" in build, build
pub = w["jobs"]["publish"]
assert "github.ref_type == 'tag'" in pub["if"] and pub["needs"] == "build", pub.get("if")
uses = [s.get("uses", "") for s in pub["steps"]]
for action in ("actions/attest-build-provenance", "actions/attest-sbom", "pypa/gh-action-pypi-publish",
               "sigstore/cosign-installer"):
    assert any(u.startswith(action + "@") for u in uses), action
assert pub["permissions"]["id-token"] == "write" and pub["permissions"]["attestations"] == "write"
PY
else
  skip "release.yml: python3 with PyYAML not found"
fi

finish
