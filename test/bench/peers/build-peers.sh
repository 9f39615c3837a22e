#!/usr/bin/env bash
# Builds the admission peers gpuguard is measured against, from the Go module proxy, into a
# cache outside the tree (default /var/cache/gpuguard-peers), once: Kyverno (the admission
# controller and the `kyverno` CLI) and OPA Gatekeeper (the manager and `gator`). Not part of
# CI: test/bench/admission_vs_peers.sh and lint_vs_peers.sh call it on demand.
#
#   test/bench/peers/build-peers.sh                    prints the cache directory on success
#   test/bench/peers/build-peers.sh --module-dir NAME  prints where the Go module cache holds the
#                                                      pinned sources of NAME (kyverno, gatekeeper):
#                                                      their install manifests live there
#
# Versions are pinned here; the modules come with their go.sum, so what is built is what the
# projects released. Kyverno's go.mod has a replace directive, so neither can be built with
# `go install module@version`: each module is copied out of the module cache and built in place.
set -euo pipefail
KYVERNO_VERSION=v1.19.1
GATEKEEPER_VERSION=v3.23.1
CACHE=${GPUGUARD_PEERS_CACHE:-/var/cache/gpuguard-peers}
export PATH=$PATH:/usr/local/go/bin
export GOFLAGS=-trimpath CGO_ENABLED=0

module_dir() {  # module_dir MODULE VERSION : the module's directory in the Go module cache
  go mod download -json "$1@$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'
}
if [[ ${1:-} == --module-dir ]]; then
  case ${2:-} in
    kyverno) module_dir github.com/kyverno/kyverno "$KYVERNO_VERSION" ;;
    gatekeeper) module_dir github.com/open-policy-agent/gatekeeper/v3 "$GATEKEEPER_VERSION" ;;
    *) echo "build-peers.sh: --module-dir kyverno|gatekeeper" >&2; exit 2 ;;
  esac
  exit
fi

build_module() {   # build_module MODULE VERSION NAME PKG:BINARY...
  local module=$1 version=$2 name=$3; shift 3
  local out=$CACHE/$name-$version src dir
  local missing=0
  for target in "$@"; do [[ -x $out/bin/${target#*:} ]] || missing=1; done
  ((missing)) || return 0
  dir=$(module_dir "$module" "$version")
  src=$out/src
  rm -rf "$src" && mkdir -p "$out/bin" && cp -r "$dir" "$src" && chmod -R u+w "$src"
  for target in "$@"; do
    echo "# building $name $version ${target%%:*}" >&2
    (cd "$src" && nice -n 19 go build -o "$out/bin/${target#*:}" "${target%%:*}") >&2
  done
  rm -rf "$src"
}

mkdir -p "$CACHE"
build_module github.com/kyverno/kyverno "$KYVERNO_VERSION" kyverno \
  ./cmd/kyverno:kyverno-admission ./cmd/cli/kubectl-kyverno:kyverno
build_module github.com/open-policy-agent/gatekeeper/v3 "$GATEKEEPER_VERSION" gatekeeper \
  .:gatekeeper-manager ./cmd/gator:gator
echo "$CACHE"
