#!/usr/bin/env bash
# Builds the admission peers gpuguard is measured against, from the Go module proxy, into a
# cache outside the tree (default /var/cache/gpuguard-peers), once: Kyverno (the admission
# controller and the `kyverno` CLI) and OPA Gatekeeper (the manager and `gator`); and, from this
# tree, the no-op webhook (noop-webhook/) that measures the floor of any webhook. Not part of
# CI: test/bench/admission_vs_peers.sh and lint_vs_peers.sh call it on demand.
#
#   test/bench/peers/build-peers.sh                    prints the cache directory on success
#   test/bench/peers/build-peers.sh --module-dir NAME  prints where the Go module cache holds the
#                                                      pinned sources of NAME (kyverno, gatekeeper):
#                                                      their install manifests live there
#   test/bench/peers/build-peers.sh --noop             builds only the no-op webhook (the floor
#                                                      any webhook pays; noop-webhook/, standard
#                                                      library only, no download) and prints its path
#
# Versions are pinned here; the modules come with their go.sum, so what is built is what the
# projects released. Kyverno's go.mod has a replace directive, so neither can be built with
# `go install module@version`: each module is copied out of the module cache and built in place.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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

# The no-op webhook from this tree, in a directory named by its sources' hash (an edit rebuilds it).
build_noop() {
  local src=$HERE/noop-webhook hash out
  hash=$(cat "$src/go.mod" "$src/main.go" | sha256sum | cut -c1-12)
  out=$CACHE/noop-webhook-$hash/bin/noop-webhook
  if [[ ! -x $out ]]; then
    echo "# building noop-webhook $hash" >&2
    mkdir -p "$(dirname "$out")"
    (cd "$src" && GOTOOLCHAIN=local nice -n 19 go build -o "$out" .) >&2
  fi
  echo "$out"
}
if [[ ${1:-} == --noop ]]; then
  mkdir -p "$CACHE"
  build_noop
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
build_noop >/dev/null
echo "$CACHE"
