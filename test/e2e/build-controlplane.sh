#!/usr/bin/env bash
# Build the control plane the e2e suite and the oracles run against: kube-apiserver and
# kube-scheduler from k8s.io/kubernetes, and etcd from go.etcd.io/etcd/server/v3, at the
# versions pinned in test/e2e/controlplane/go.mod + go.sum (Go module proxy, checksummed).
#
# The binaries go to $GPUGUARD_E2E_CACHE/controlplane-<k8s version>/ and are reused while the
# stamp there matches go.mod, go.sum and this script: then this is a no-op in well under a
# second. Go's own caches (module cache, GOCACHE) are the defaults, so a warm build cache on
# the machine is reused too.
#
#   GPUGUARD_E2E_CACHE    cache dir outside the source tree (default /var/cache/gpuguard-e2e)
#   GPUGUARD_E2E_GO_P     go build -p (default 2: the machines have 2 cores)
#   GO                    the go command (default /usr/local/go/bin/go, else go on PATH;
#                         it must be at least go.mod's go, since GOTOOLCHAIN=local)
#
# Prints the directory holding the three binaries on stdout; logs go to stderr.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD=$HERE/controlplane
CACHE=${GPUGUARD_E2E_CACHE:-/var/cache/gpuguard-e2e}
GO=${GO:-$(command -v /usr/local/go/bin/go || command -v go || echo go)}

log() { printf '[build-controlplane] %s\n' "$*" >&2; }

command -v "$GO" >/dev/null || { log "no Go toolchain (expected /usr/local/go/bin/go)"; exit 1; }
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0
cd "$MOD"

K8S_VERSION=$("$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
ETCD_VERSION=$("$GO" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
OUT=$CACHE/controlplane-$K8S_VERSION
stamp=$( { cat go.mod go.sum "$HERE/build-controlplane.sh" etcd/main.go; "$GO" version; } | sha256sum | cut -c1-16)

if [[ -f $OUT/stamp && $(cat "$OUT/stamp") == "$stamp" ]] &&
   [[ -x $OUT/kube-apiserver && -x $OUT/kube-scheduler && -x $OUT/etcd ]]; then
    log "cached: $OUT (kubernetes $K8S_VERSION, etcd $ETCD_VERSION)"
    echo "$OUT"
    exit 0
fi

start=$SECONDS
mkdir -p "$OUT.tmp"
# What `make` would stamp (hack/lib/version.sh); /version, kubectl's skew check and the
# `control plane:` line read it. The tree state is "clean": the module zip is the release.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
commit=$(awk -v v="$K8S_VERSION" '$1=="k8s.io/kubernetes" && $2==v {print $3}' go.sum | head -n1 | cut -c4-15)
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.gitCommit=module-h1-$commit"
    ldflags+=" -X $p.buildDate=1970-01-01T00:00:00Z"
done
log "go $("$GO" env GOVERSION): building kubernetes $K8S_VERSION (kube-apiserver, kube-scheduler) and etcd $ETCD_VERSION"
log "  (cold, 2 cores: 25-40 min of CPU; warm Go build cache: ~1-2 min)"
timeout 5400 "$GO" mod download
timeout 5400 "$GO" build -p "${GPUGUARD_E2E_GO_P:-2}" -ldflags "$ldflags" -o "$OUT.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler ./etcd
echo "$stamp" > "$OUT.tmp/stamp"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
log "built in $((SECONDS - start)) s: $("$OUT/kube-apiserver" --version), $("$OUT/kube-scheduler" --version), etcd $("$OUT/etcd" --version | head -n1)"
echo "$OUT"
