#!/usr/bin/env bash
# Builds every release artifact into OUTDIR, the same steps the release workflow runs on a tag
# (.github/workflows/release.yml), without pushing anything:
#
#   tools/release.sh OUTDIR
#
#   OUTDIR/gpuguard-lint-linux-amd64, gpuguard-webhook-linux-amd64   static, stripped binaries
#   OUTDIR/gpuguard_lint-VERSION-py3-none-manylinux_2_17_x86_64...whl the wheel (pip install)
#   OUTDIR/gpuguard-webhook-VERSION-linux-amd64.oci.tar               the image (OCI layout + docker load)
#   OUTDIR/oci-layout/                                               the same image, unpacked (skopeo oci:)
#   OUTDIR/gpuguard-VERSION.tgz                                      the chart (helm package)
#   OUTDIR/gpuguard-VERSION.spdx.json                                SBOM: what the static binaries contain
#   OUTDIR/SHA256SUMS                                                the checksums of all of the above
#   OUTDIR/release.json                                              names, digests, sizes (for the workflow)
#
# Environment: RELEASE_BUILD_DIR (default build-release), GPUGUARD_COMMIT (default: git),
# SOURCE_DATE_EPOCH (default: the commit's time, so a rebuild of one commit is the same bytes),
# HELM (default: helm on PATH, else test/tools/install-kubectl-helm.sh). Checked by
# test/ship/release_check.sh OUTDIR (CI runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
[[ $# -eq 1 ]] || { echo "usage: tools/release.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
OUT=$(cd "$1" && pwd -P)
start=$SECONDS
log() { printf '[release] %s\n' "$*" >&2; }

# shellcheck source=tools/release.env
source tools/release.env
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
# The commit: full for the image's labels and the SBOM, 12 digits in --version; "-dirty" when the
# work tree has changes (never from a tag: a clone may have none).
describe() { git describe --always --dirty --abbrev="$1" --match=gpuguard-no-tag-matches-this 2>/dev/null || echo unknown; }
commit=${GPUGUARD_COMMIT:-$(describe 40)}
short=${GPUGUARD_COMMIT:-$(describe 12)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
arch=$(uname -m)
case $arch in
  x86_64) goarch=amd64 ;;
  aarch64) goarch=arm64 ;;
  *) echo "release.sh: unsupported machine $arch" >&2; exit 1 ;;
esac
log "gpuguard $version, commit $commit, linux/$goarch -> $OUT"

# ---- 1. static binaries (cmake/static.cmake), stripped -----------------------------------------
BUILD=${RELEASE_BUILD_DIR:-build-release}
BUILD_DIR=$BUILD BUILD_TYPE=Release \
  CMAKE_ARGS="-DGPUGUARD_STATIC=ON -DGPUGUARD_BUILD_TESTS=OFF -DGPUGUARD_COMMIT=$short ${CMAKE_ARGS:-}" \
  ./build.sh
command -v python3 >/dev/null || { echo "release.sh: python3 is needed" >&2; exit 1; }
for b in gpuguard-lint gpuguard-webhook; do
  dest=$OUT/$b-linux-$goarch
  strip --strip-all -o "$dest" "$BUILD/$b"
  chmod 0755 "$dest"
  # Static means no program interpreter and no NEEDED library; a dynamic one would fail elsewhere.
  if LC_ALL=C readelf -ld "$dest" | grep -qE 'INTERP|\(NEEDED\)'; then
    echo "release.sh: $dest is not static:" >&2; readelf -ld "$dest" | grep -E 'INTERP|NEEDED' >&2; exit 1
  fi
  "$dest" --version | grep -qF "$version (commit $short)" ||
    { echo "release.sh: $dest --version does not say $version (commit $short)" >&2; exit 1; }
done
log "binaries: $(stat -c '%n %s' "$OUT"/gpuguard-*-linux-"$goarch" | sed "s|$OUT/||" | paste -sd, -) bytes"

# ---- 2. the wheel --------------------------------------------------------------------------------
rm -f "$OUT"/gpuguard_lint-*.whl
wheel=$(python3 tools/make_wheel.py --binary "$OUT/gpuguard-lint-linux-$goarch" --arch "$goarch" --out "$OUT")
log "wheel: $(basename "$wheel")"

# ---- 3. the image (FROM scratch, no daemon) --------------------------------------------------------
image_archive=gpuguard-webhook-$version-linux-$goarch.oci.tar
rm -rf "$OUT/oci-layout" "$OUT/image.tmp"
image=$(python3 tools/make_oci_image.py --lint "$OUT/gpuguard-lint-linux-$goarch" \
  --webhook "$OUT/gpuguard-webhook-linux-$goarch" --license LICENSE --arch "$goarch" \
  --repository "$GPUGUARD_IMAGE_REPOSITORY" --tag "$version" --revision "$commit" \
  --source "${GPUGUARD_SOURCE_URL:-}" --out "$OUT/image.tmp" --archive "$image_archive")
mv "$OUT/image.tmp/$image_archive" "$OUT/" && mv "$OUT/image.tmp/layout" "$OUT/oci-layout" && rmdir "$OUT/image.tmp"
manifest_digest=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["manifest"])' "$image")
log "image: $GPUGUARD_IMAGE_REPOSITORY:$version@$manifest_digest"

# ---- 4. the chart ------------------------------------------------------------------------------------
HELM=${HELM:-$(command -v helm || true)}
if [[ -z $HELM ]]; then
  eval "$(test/tools/install-kubectl-helm.sh)"
  HELM=$(command -v helm)
fi
rm -f "$OUT"/gpuguard-*.tgz
"$HELM" package manifests/chart/gpuguard --destination "$OUT" >/dev/null
chart=$OUT/gpuguard-$version.tgz
[[ -f $chart ]] || { echo "release.sh: helm package did not write $chart" >&2; exit 1; }
log "chart: $(basename "$chart")"

# ---- 5. SBOM and checksums -----------------------------------------------------------------------------
python3 tools/make_sbom.py --version "$version" --commit "$commit" --out "$OUT/gpuguard-$version.spdx.json" \
  "$OUT/gpuguard-lint-linux-$goarch" "$OUT/gpuguard-webhook-linux-$goarch" "$wheel" "$OUT/$image_archive" "$chart"
(cd "$OUT" && find . -maxdepth 1 -type f ! -name SHA256SUMS ! -name release.json -printf '%f\n' | LC_ALL=C sort |
  xargs sha256sum >SHA256SUMS)
python3 - "$OUT" "$version" "$commit" "$GPUGUARD_IMAGE_REPOSITORY" "$manifest_digest" "$goarch" <<'PY'
import json, os, sys
out, version, commit, repo, digest, arch = sys.argv[1:]
files = {f: os.path.getsize(os.path.join(out, f)) for f in sorted(os.listdir(out))
         if os.path.isfile(os.path.join(out, f)) and f != "release.json"}
json.dump({"version": version, "commit": commit, "image": f"{repo}:{version}", "imageDigest": digest,
           "arch": arch, "files": files}, open(os.path.join(out, "release.json"), "w"), indent=2)
PY
log "done in $((SECONDS - start)) s; $OUT/SHA256SUMS:"
sed 's/^/  /' "$OUT/SHA256SUMS" >&2
