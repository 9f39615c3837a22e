#!/usr/bin/env bash
# Checks what tools/release.sh left in OUTDIR the way a user without a compiler meets it:
#   - SHA256SUMS verifies; the SBOM names every artifact with its hash;
#   - the binaries are static and stripped, say their version and commit, and run in an empty
#     directory with an empty environment and inside a root filesystem holding nothing else
#     (chroot), where the webhook serves a real AdmissionReview over HTTPS;
#   - the wheel installs into a fresh virtualenv with pip (no index) and its gpuguard-lint lints;
#   - a pre-commit hook of this repository (rev: a commit id, language: python) installs that
#     wheel and lints a staged GPU manifest;
#   - the image: its OCI layout is consistent (digests, sizes), its config runs as 65532:65532
#     with gpuguard-webhook as entrypoint, its layer has no shell, and the binaries unpacked
#     from the layer run (as 65532, chrooted into the layer); umoci unpacks it when installed;
#   - the chart package installs-renders, refuses a misspelt rule id and renders the same twice.
#
#   test/ship/release_check.sh OUTDIR     (CI: after tools/release.sh OUTDIR)
# The chroot checks need root (CI is root); without it they are skipped, not passed.
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=release
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

OUT=$(cd "${1:?usage: release_check.sh OUTDIR}" && pwd -P)
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
repository=$(sed -n 's/^GPUGUARD_IMAGE_REPOSITORY=//p' "$REPO/tools/release.env")
arch=amd64; [[ $(uname -m) == aarch64 ]] && arch=arm64
LINT=$OUT/gpuguard-lint-linux-$arch
WEBHOOK=$OUT/gpuguard-webhook-linux-$arch
BAD=$REPO/manifests/examples/bad-fractional.yaml
AS_ROOT=0; [[ $(id -u) -eq 0 ]] && command -v chroot >/dev/null && AS_ROOT=1

# ---- checksums and SBOM ----------------------------------------------------------------------
check "SHA256SUMS verifies every file it lists" quiet bash -c "cd '$OUT' && sha256sum -c --strict SHA256SUMS"
for f in "$LINT" "$WEBHOOK" "$OUT"/gpuguard_lint-"$version"-*.whl "$OUT/gpuguard-$version.tgz" \
         "$OUT/gpuguard-webhook-$version-linux-$arch.oci.tar" "$OUT/gpuguard-$version.spdx.json"; do
  check "SHA256SUMS lists $(basename "$f")" grep -q " $(basename "$f")\$" "$OUT/SHA256SUMS"
done
check "the SBOM is SPDX 2.3, names gpuguard $version, the statically linked libraries and each artifact's hash" \
  python3 - "$OUT" "$version" <<'PY'
import hashlib, json, os, sys
out, version = sys.argv[1:]
doc = json.load(open(os.path.join(out, f"gpuguard-{version}.spdx.json")))
assert doc["spdxVersion"] == "SPDX-2.3"
names = {p["name"]: p for p in doc["packages"]}
assert names["gpuguard"]["versionInfo"] == version
assert {"libssl-dev", "libre2-dev", "libyaml-cpp-dev", "libc6-dev"} <= set(names), sorted(names)
for f in doc["files"]:
    data = open(os.path.join(out, f["fileName"]), "rb").read()
    assert f["checksums"][0]["checksumValue"] == hashlib.sha256(data).hexdigest(), f["fileName"]
assert len(doc["files"]) >= 5
PY

# ---- the binaries ------------------------------------------------------------------------------
for b in "$LINT" "$WEBHOOK"; do
  name=$(basename "$b")
  check "$name: static (no program interpreter, no shared library)" not grep -qE 'INTERP|\(NEEDED\)' <(readelf -ld "$b")
  check "$name: stripped (no symbol table)" not grep -q '\.symtab' <(readelf -S "$b")
  check "$name --version says $version and a commit" grep -qE "^gpuguard-(lint|webhook) $version \(commit [0-9a-f]{7,}(-dirty)?\)\$" <("$b" --version)
  printf '%s: %s bytes\n' "# $name" "$(stat -c %s "$b")"
done
EMPTY=$SHIP_TMP/empty
mkdir -p "$EMPTY" && cp "$LINT" "$BAD" "$EMPTY/"
rc=0; (cd "$EMPTY" && env -i ./gpuguard-lint-linux-$arch bad-fractional.yaml) >"$SHIP_TMP/empty.out" 2>&1 || rc=$?
check "gpuguard-lint in an empty directory with an empty environment finds the fractional GPU (exit $rc)" \
  test "$rc" -eq 1 -a -n "$(grep '\[gpu-fractional\]' "$SHIP_TMP/empty.out")"

# tls_pair DIR : a CA and a serving certificate for localhost in DIR (ca.crt, tls.crt, tls.key)
tls_pair() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca \
    -keyout "$1/ca.key" -out "$1/ca.crt" 2>/dev/null &&
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
    -keyout "$1/tls.key" -out "$1/tls.csr" 2>/dev/null &&
  openssl x509 -req -in "$1/tls.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -CAcreateserial -days 2 \
    -extfile <(printf 'subjectAltName=DNS:localhost\n') -out "$1/tls.crt" 2>/dev/null && chmod 644 "$1/tls.key"
}
# serves_review ROOTFS BINARY_IN_ROOTFS WHAT : the webhook, chrooted as 65532, answers an AdmissionReview
serves_review() {
  local root=$1 bin=$2 what=$3 wrapper=$SHIP_TMP/chrooted-webhook
  tls_pair "$root/tls" || { fail "$what: openssl could not make a test certificate"; return; }
  printf '#!/bin/sh\nexec chroot --userspec=65532:65532 %s %s "$@"\n' "$root" "$bin" >"$wrapper" && chmod +x "$wrapper"
  if start_webhook "$wrapper" "$SHIP_TMP/chroot-webhook.log" --tls-cert-file=/tls/tls.crt --tls-private-key-file=/tls/tls.key; then
    local review=$REPO/test/data/admission-samples/01-CREATE-Pod-gpu-pod.json
    curl -s --cacert "$root/tls/ca.crt" --resolve "localhost:$WEBHOOK_PORT:127.0.0.1" -H 'Content-Type: application/json' \
      --data-binary @"$review" "https://localhost:$WEBHOOK_PORT/validate" >"$SHIP_TMP/review.json"
    check "$what: serves an AdmissionReview over HTTPS (the response names the request's uid)" python3 - "$review" "$SHIP_TMP/review.json" <<'PY'
import json, sys
req, resp = (json.load(open(p)) for p in sys.argv[1:])
assert resp["kind"] == "AdmissionReview" and resp["response"]["uid"] == req["request"]["uid"], resp
assert isinstance(resp["response"]["allowed"], bool)
PY
  else
    fail "$what: does not start: $(tail -n 3 "$SHIP_TMP/chroot-webhook.log")"
  fi
  stop_webhook
}

if ((AS_ROOT)); then
  ROOT=$SHIP_TMP/rootfs   # nothing but the two binaries, a manifest and a certificate
  mkdir -p "$ROOT/tls" "$ROOT/tmp" && cp "$LINT" "$WEBHOOK" "$BAD" "$ROOT/"
  rc=0; chroot --userspec=65532:65532 "$ROOT" /gpuguard-lint-linux-$arch /bad-fractional.yaml >"$SHIP_TMP/chroot.out" 2>&1 || rc=$?
  check "gpuguard-lint in a root filesystem holding nothing else lints (exit $rc)" grep -q '\[gpu-fractional\]' "$SHIP_TMP/chroot.out"
  serves_review "$ROOT" /gpuguard-webhook-linux-$arch "gpuguard-webhook in an empty root filesystem"
else
  skip "chroot checks: not root"
fi

# ---- the wheel ------------------------------------------------------------------------------------
wheels=("$OUT"/gpuguard_lint-"$version"-py3-none-*.whl)
check "one wheel, tagged for any glibc (manylinux_2_17) and musl (musllinux_1_1): ${wheels[0]##*/}" \
  test "${#wheels[@]}" -eq 1 -a -n "$(grep -E "manylinux_2_17_[a-z0-9_]+\.manylinux2014_[a-z0-9_]+\.musllinux_1_1_" <<<"${wheels[0]}")"
VENV=$SHIP_TMP/venv
if python3 -m venv "$VENV" >/dev/null 2>&1 &&
   "$VENV/bin/pip" install --no-index --disable-pip-version-check -q "${wheels[0]}" >"$SHIP_TMP/pip.log" 2>&1; then
  ok "pip install of the wheel into a fresh virtualenv (no index)"
  check "the wheel put gpuguard-lint on the virtualenv's PATH, the static binary itself" cmp -s "$VENV/bin/gpuguard-lint" "$LINT"
  rc=0; PATH=$VENV/bin:/usr/bin:/bin gpuguard-lint "$BAD" >"$SHIP_TMP/venv.out" 2>&1 || rc=$?
  check "gpuguard-lint from the wheel lints (exit $rc)" grep -q '\[gpu-fractional\]' "$SHIP_TMP/venv.out"
  check "python -m gpuguard_lint runs it too" grep -q "^gpuguard-lint $version" <("$VENV/bin/python" -m gpuguard_lint --version)
else
  fail "pip install of the wheel: $(tail -n 5 "$SHIP_TMP/pip.log")"
fi

# ---- a pre-commit hook of this repository, from the wheel -------------------------------------------
if command -v pre-commit >/dev/null && git -C "$REPO" rev-parse -q --verify HEAD >/dev/null; then
  SAMPLE=$SHIP_TMP/sample
  git init -q "$SAMPLE"
  printf 'repos:\n- repo: %s\n  rev: %s\n  hooks:\n  - id: gpuguard-lint\n' "$REPO" "$(git -C "$REPO" rev-parse HEAD)" \
    >"$SAMPLE/.pre-commit-config.yaml"
  cp "$BAD" "$SAMPLE/gpu-job.yaml"
  git -C "$SAMPLE" add -A
  rc=0
  (cd "$SAMPLE" && PRE_COMMIT_HOME=$SHIP_TMP/pre-commit PIP_NO_INDEX=1 PIP_FIND_LINKS=$OUT \
    PATH=/usr/local/bin:/usr/bin:/bin pre-commit run gpuguard-lint) >"$SHIP_TMP/pre-commit.out" 2>&1 || rc=$?
  check "pre-commit (rev: HEAD, language: python) installs the wheel and fails on the staged manifest (exit $rc)" \
    grep -q 'gpu-job.yaml:.*\[gpu-fractional\]' "$SHIP_TMP/pre-commit.out"
  ((rc == 1)) || sed 's/^/#   /' "$SHIP_TMP/pre-commit.out" | tail -n 20
else
  skip "pre-commit hook from the wheel: pre-commit not installed, or no git HEAD"
fi

# ---- the image ---------------------------------------------------------------------------------------
LAYER=$SHIP_TMP/layer
mkdir -p "$LAYER"
check "the image's OCI layout is consistent and its config is what Kubernetes needs" \
  python3 - "$OUT" "$version" "$repository" "$arch" "$LAYER" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
out, version, repository, arch, layer_dir = sys.argv[1:]
layout = os.path.join(out, "oci-layout")
def blob(digest, size=None):
    data = open(os.path.join(layout, "blobs", *digest.split(":")), "rb").read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == digest, digest
    assert size is None or len(data) == size, (digest, size, len(data))
    return data
assert json.load(open(os.path.join(layout, "oci-layout")))["imageLayoutVersion"] == "1.0.0"
index = json.load(open(os.path.join(layout, "index.json")))
[desc] = index["manifests"]
assert desc["annotations"]["org.opencontainers.image.ref.name"] == version
assert desc["platform"] == {"architecture": arch, "os": "linux"}
manifest = json.loads(blob(desc["digest"], desc["size"]))
config = json.loads(blob(manifest["config"]["digest"], manifest["config"]["size"]))
c = config["config"]
assert c["User"] == "65532:65532", c["User"]
assert c["Entrypoint"] == ["/usr/local/bin/gpuguard-webhook"], c["Entrypoint"]
assert "8443/tcp" in c["ExposedPorts"]
assert c["Labels"]["org.opencontainers.image.version"] == version
[layer] = manifest["layers"]
raw = gzip.decompress(blob(layer["digest"], layer["size"]))
assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(raw).hexdigest()]
with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
    names = tar.getnames()
    assert not any(n.endswith(("bin/sh", "bin/bash", "busybox")) for n in names), names
    assert all(m.uid == 0 and m.gid == 0 for m in tar.getmembers())
    tar.extractall(layer_dir)
# The archive: the same blobs, and docker load's manifest.json naming the image.
with tarfile.open(os.path.join(out, f"gpuguard-webhook-{version}-linux-{arch}.oci.tar")) as tar:
    docker = json.load(tar.extractfile("manifest.json"))
    assert docker[0]["RepoTags"] == [f"{repository}:{version}"], docker
    assert json.load(tar.extractfile("index.json")) == index
print("layer:", sorted(names))
PY
check "the layer holds both binaries, executable" test -x "$LAYER/usr/local/bin/gpuguard-webhook" -a -x "$LAYER/usr/local/bin/gpuguard-lint"
if ((AS_ROOT)); then
  rc=0; chroot --userspec=65532:65532 "$LAYER" /usr/local/bin/gpuguard-lint --version >"$SHIP_TMP/layer.out" 2>&1 || rc=$?
  check "gpuguard-lint from the layer runs as 65532 inside the layer (exit $rc)" grep -q "^gpuguard-lint $version" "$SHIP_TMP/layer.out"
  mkdir -p "$LAYER/tls"
  serves_review "$LAYER" /usr/local/bin/gpuguard-webhook "the image's entrypoint, chrooted into its layer"
fi
if command -v umoci >/dev/null; then
  if umoci unpack --rootless --image "$OUT/oci-layout:$version" "$SHIP_TMP/bundle" >"$SHIP_TMP/umoci.log" 2>&1; then
    ok "umoci unpacks the image ($(umoci --version 2>&1 | head -n1))"
    check "umoci's runtime config runs as uid 65532" \
      python3 -c 'import json,sys; u=json.load(open(sys.argv[1]))["process"]["user"]; assert (u["uid"], u["gid"]) == (65532, 65532), u' "$SHIP_TMP/bundle/config.json"
    check "the bundle's gpuguard-lint runs" quiet "$SHIP_TMP/bundle/rootfs/usr/local/bin/gpuguard-lint" --version
  else
    fail "umoci unpack: $(tail -n 3 "$SHIP_TMP/umoci.log")"
  fi
else
  skip "umoci not installed (apt-get install umoci): its own check of the layout not run"
fi

# ---- the chart package ----------------------------------------------------------------------------------
CHART=$OUT/gpuguard-$version.tgz
if find_helm; then
  check "helm show chart: gpuguard $version" grep -qx "version: $version" <("$HELM" show chart "$CHART")
  check "the packaged chart's image is $repository" grep -qx "  repository: $repository" <("$HELM" show values "$CHART")
  "$HELM" template gpuguard "$CHART" -n gpuguard-system >"$SHIP_TMP/t1.yaml" 2>&1
  "$HELM" template gpuguard "$CHART" -n gpuguard-system >"$SHIP_TMP/t2.yaml" 2>&1
  check "two renders of the package with default values are the same" cmp -s "$SHIP_TMP/t1.yaml" "$SHIP_TMP/t2.yaml"
  check "... and run the image $repository:$version" grep -q "image: $repository:$version" "$SHIP_TMP/t1.yaml"
  rc=0; "$HELM" install gpuguard "$CHART" -n gpuguard-system --dry-run=client --set policy.rules.gpu-fractionl=off \
    >"$SHIP_TMP/dry.log" 2>&1 || rc=$?
  check "helm install --dry-run of the package refuses a misspelt rule id, naming it (exit $rc)" \
    test "$rc" -ne 0 -a -n "$(grep gpu-fractionl "$SHIP_TMP/dry.log")"
else
  skip "chart package checks: $HELM_MISSING"
fi

finish
