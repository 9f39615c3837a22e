#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` in the build directory makes gpuguard_<version>_<arch>.deb
# with both binaries, their docs and the policy schema; its Depends (from dpkg-shlibdeps)
# names real packages that this Debian satisfies (dpkg --dry-run -i); unpacked into a clean
# directory (dpkg -x, no root needed) both binaries run from there: versions, a lint, the
# shipped example policy, a served /readyz.
#
#   test/ship/package_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=package
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
if sanitizer_build "$BUILD"; then skip "sanitizer build: the package is made from the normal build"; finish; fi
for tool in cpack dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { skip "$tool not installed (Debian: cmake, dpkg-dev)"; finish; }
done
[[ -f $BUILD/CPackConfig.cmake ]] || { skip "no CPackConfig.cmake in $BUILD (configure first)"; finish; }
if [[ -z $(find_binary "$BUILD" gpuguard-lint) || -z $(find_binary "$BUILD" gpuguard-webhook) ]]; then
  fail "the binaries are not built in $BUILD"
  finish
fi
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
arch=$(dpkg --print-architecture)

# ---- build the package ------------------------------------------------------------------------------
PKG=$SHIP_TMP/pkg
if (cd "$BUILD" && cpack -G DEB -B "$PKG" >"$SHIP_TMP/cpack.log" 2>&1); then
  ok "cpack -G DEB"
else
  fail "cpack -G DEB: $(tail -n 20 "$SHIP_TMP/cpack.log")"
  finish
fi
DEB=$PKG/gpuguard_${version}_$arch.deb
check "the package is gpuguard_${version}_$arch.deb" test -f "$DEB"
[[ -f $DEB ]] || finish

field() { dpkg-deb -f "$DEB" "$1"; }
check "Package: gpuguard" test "$(field Package)" = gpuguard
check "Version: $version" test "$(field Version)" = "$version"
check "Architecture: $arch" test "$(field Architecture)" = "$arch"
check "a Maintainer" test -n "$(field Maintainer)"
check "a Description with a synopsis" test -n "$(field Description | head -n 1)"
depends=$(field Depends)
ok "Depends: $depends"
depends_names=$(sed 's/([^)]*)//g; s/|/,/g' <<<"$depends" | tr ',' '\n' | tr -d ' ' | sort -u)
for lib in libc6 libstdc++6 libgcc-s1 libssl3 libyaml-cpp0.7; do
  check "Depends names $lib (dpkg-shlibdeps)" grep -qxF "$lib" <<<"$depends_names"
done
# Every package named exists in this Debian, at a version that satisfies the dependency.
if [[ $(id -u) -eq 0 ]]; then
  if dpkg --dry-run -i "$DEB" >"$SHIP_TMP/dryrun.log" 2>&1; then
    ok "dpkg --dry-run -i: installable here, every dependency satisfied"
  else
    fail "dpkg --dry-run -i: $(cat "$SHIP_TMP/dryrun.log")"
  fi
else
  skip "dpkg --dry-run -i needs root"
fi

dpkg-deb -c "$DEB" | awk '{print $NF}' | sed 's#^\./#/#' >"$SHIP_TMP/contents"
for f in /usr/bin/gpuguard-webhook /usr/bin/gpuguard-lint /usr/share/doc/gpuguard/copyright \
  /usr/share/doc/gpuguard/README.md /usr/share/doc/gpuguard/CHANGELOG.md /usr/share/doc/gpuguard/docs/webhook.md \
  /usr/share/doc/gpuguard/docs/linter.md /usr/share/doc/gpuguard/docs/rules.md /usr/share/doc/gpuguard/examples/policy.yaml \
  /usr/share/gpuguard/policy.schema.json; do
  check "ships $f" grep -qx "$f" "$SHIP_TMP/contents"
done
outside=$(grep -v '^/usr/\|^/$' "$SHIP_TMP/contents" | tr '\n' ' ')
check "nothing outside /usr${outside:+ ($outside)}" test -z "$outside"

# ---- unpack into a clean directory and run from there --------------------------------------------------
ROOT=$SHIP_TMP/root
mkdir -p "$ROOT"
dpkg -x "$DEB" "$ROOT" || fail "dpkg -x"
LINT=$ROOT/usr/bin/gpuguard-lint
WEBHOOK=$ROOT/usr/bin/gpuguard-webhook
check "copyright is the Apache License 2.0" grep -q "Apache License" "$ROOT/usr/share/doc/gpuguard/copyright"
for b in "$LINT" "$WEBHOOK"; do
  check "$(basename "$b") is stripped (no .symtab)" not quiet sh -c "readelf -S '$b' | grep -q '\.symtab'"
  missing=$(ldd "$b" 2>&1 | grep "not found" | tr '\n' ' ')
  check "$(basename "$b"): every library it loads is on this system${missing:+ (missing: $missing)}" test -z "$missing"
done
check "gpuguard-lint --version from the package says $version and the commit" grep -q "^gpuguard-lint $version (commit " <("$LINT" --version 2>&1)
check "gpuguard-webhook --version from the package says $version and the commit" grep -q "^gpuguard-webhook $version (commit " <("$WEBHOOK" --version 2>&1)
cd "$SHIP_TMP" || exit 1
rc=0
"$LINT" "$REPO/manifests/examples/bad-fractional.yaml" >"$SHIP_TMP/lint.out" 2>&1 || rc=$?
check "the packaged gpuguard-lint finds the fractional GPU (exit $rc)" test "$rc" -eq 1
check "... and names the rule" grep -q "\[gpu-fractional\]" "$SHIP_TMP/lint.out"
check "the packaged example policy loads (gpuguard-webhook --check-policy)" \
  quiet "$WEBHOOK" --check-policy --policy="$ROOT/usr/share/doc/gpuguard/examples/policy.yaml"
PYJS=$(python_with yaml jsonschema)
if [[ -n $PYJS ]]; then
  check "the packaged example policy validates against the packaged schema" "$PYJS" -c '
import json, sys, yaml, jsonschema
jsonschema.validate(yaml.safe_load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
    "$ROOT/usr/share/gpuguard/policy.schema.json" "$ROOT/usr/share/doc/gpuguard/examples/policy.yaml"
fi
if command -v openssl >/dev/null && command -v curl >/dev/null; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$SHIP_TMP/k.pem" -out "$SHIP_TMP/c.pem" \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost -days 2 >/dev/null 2>&1
  if start_webhook "$WEBHOOK" "$SHIP_TMP/webhook.log" --tls-cert-file="$SHIP_TMP/c.pem" --tls-private-key-file="$SHIP_TMP/k.pem"; then
    check "the packaged gpuguard-webhook serves /readyz" \
      quiet curl -sf --cacert "$SHIP_TMP/c.pem" "https://localhost:$WEBHOOK_PORT/readyz"
  else
    fail "the packaged gpuguard-webhook does not start: $(tail -n 3 "$SHIP_TMP/webhook.log")"
  fi
  stop_webhook
fi

finish
