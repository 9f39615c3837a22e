#!/usr/bin/env bash
# Build a real kube-apiserver v1.20.2 offline from Debian's `kubernetes` source package.
#
# Idempotent: once $CACHE/bin/kube-apiserver exists (and runs) this is a no-op in well
# under a second.  A cold build takes about 8 minutes on 2 cores.
#
#   GPUGUARD_E2E_CACHE   cache dir outside the source tree (default /var/cache/gpuguard-e2e)
#   GPUGUARD_E2E_NO_APT  set to 1 to never call apt-get (fail instead if something is missing)
#
# Recipe and background: ../shared/reference/e2e-apiserver.md (relative to the repo).
# Needs root for apt-get (CI and dev machines run as root).
#
# The toolchain is Debian's Go 1.19 (golang-1.19-go, /usr/lib/go-1.19), named explicitly:
# the machines now put Go 1.26 first on PATH (/usr/local/go/bin), and the 1.20 tree with its
# vendor/ layout, reflect2 and GOPATH-mode `make gen_openapi` is only known to build with 1.19.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${GPUGUARD_E2E_CACHE:-/var/cache/gpuguard-e2e}
BIN=$CACHE/bin/kube-apiserver
K8S_VERSION=v1.20.2
K8S_COMMIT=faecb196815e248d3ecfb03c680a4507229c2a56

log() { printf '[build-apiserver] %s\n' "$*" >&2; }

if [[ -x $BIN ]] && "$BIN" --version 2>/dev/null | grep -q "Kubernetes $K8S_VERSION"; then
    log "cached: $BIN ($("$BIN" --version))"
    exit 0
fi

start=$(date +%s)
mkdir -p "$CACHE/bin" "$CACHE/src"

# ---- 1. packages -------------------------------------------------------------------
SRC_LIST=/etc/apt/sources.list.d/gpuguard-e2e-debsrc.sources
need_pkgs=()
GO119=/usr/lib/go-1.19/bin
[[ -x $GO119/go ]] || need_pkgs+=(golang-1.19-go)
command -v etcd >/dev/null || need_pkgs+=(etcd-server)
[[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ]] || need_pkgs+=(golang-github-modern-go-reflect2-dev)
command -v rsync >/dev/null || need_pkgs+=(rsync)
command -v dpkg-source >/dev/null || need_pkgs+=(dpkg-dev)
command -v openssl >/dev/null || need_pkgs+=(openssl)
command -v curl >/dev/null || need_pkgs+=(curl)
command -v make >/dev/null || need_pkgs+=(make)
command -v python3 >/dev/null || need_pkgs+=(python3)
have_src=$(ls -d "$CACHE"/src/kubernetes-*/ 2>/dev/null | head -n1 || true)

if (( ${#need_pkgs[@]} )) || [[ -z $have_src ]]; then
    if [[ ${GPUGUARD_E2E_NO_APT:-0} == 1 ]]; then
        log "missing: ${need_pkgs[*]:-} ${have_src:-kubernetes source}; GPUGUARD_E2E_NO_APT=1"; exit 1
    fi
    if [[ ! -f $SRC_LIST ]] && ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && \
       ! grep -qs '^deb-src' /etc/apt/sources.list; then
        log "adding deb-src entries: $SRC_LIST"
        cat > "$SRC_LIST" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    fi
    log "apt-get update"
    timeout 600 apt-get update -q >&2
    if (( ${#need_pkgs[@]} )); then
        log "apt-get install ${need_pkgs[*]}"
        DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" >&2
    fi
fi

if [[ -z $have_src ]]; then
    log "apt-get source kubernetes -> $CACHE/src"
    (cd "$CACHE/src" && timeout 900 apt-get source -q kubernetes >&2)
    have_src=$(ls -d "$CACHE"/src/kubernetes-*/ | head -n1)
fi
SRC=${have_src%/}
log "source tree: $SRC"
# Every `go` below, including the one `make gen_openapi` runs, is Debian's 1.19. GOTOOLCHAIN
# keeps a newer go (should one be reached anyway) from switching toolchains by itself.
export PATH=$GO119:$PATH GOTOOLCHAIN=local
log "toolchain: $(go version)"
cd "$SRC"

# ---- 2. fix vendor/modules.txt (Go >= 1.17 rejects the 1.20 layout) ----------------
python3 "$HERE/fix-modules-txt.py" vendor/modules.txt >&2

# ---- 3. reflect2 1.0.1 -> 1.0.2 (1.0.1 breaks map iteration at run time on Go >= 1.18)
R2_NEW=/usr/share/gocode/src/github.com/modern-go/reflect2
R2_VENDOR=vendor/github.com/modern-go/reflect2
if [[ ! -f $R2_VENDOR/go_above_118.go ]]; then
    log "swapping in reflect2 from $R2_NEW"
    rm -f "$R2_VENDOR"/*.go "$R2_VENDOR"/*.s
    cp "$R2_NEW"/*.go "$R2_NEW"/*.s "$R2_VENDOR"/
    rm -f "$R2_VENDOR"/*_test.go
fi

# ---- 4. generated openapi definitions (not in the tarball) -------------------------
export GOCACHE=$CACHE/gocache
mkdir -p "$GOCACHE"
if [[ ! -f pkg/generated/openapi/zz_generated.openapi.go ]]; then
    log "make gen_openapi (GOPATH mode, ~20 s)"
    timeout 1200 env -u GOFLAGS -u GO111MODULE -u GOPROXY make gen_openapi >&2
fi

# ---- 5. compile ----------------------------------------------------------------------
pkgs=(k8s.io/component-base/version k8s.io/client-go/pkg/version)
date_=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(stat -c %Y go.mod)}" +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for p in "${pkgs[@]}"; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitCommit=$K8S_COMMIT -X $p.gitTreeState=clean"
    ldflags+=" -X $p.gitMajor=1 -X $p.gitMinor=20 -X $p.buildDate=$date_"
done
log "go build ./cmd/kube-apiserver (cold: ~7-8 min on 2 cores; warm: ~20 s)"
GOFLAGS=-mod=vendor GOPROXY=off GO111MODULE=on CGO_ENABLED=0 \
    timeout 3600 go build -trimpath -ldflags "$ldflags" -o "$BIN.tmp" ./cmd/kube-apiserver
mv -f "$BIN.tmp" "$BIN"
log "built $BIN: $("$BIN" --version) in $(( $(date +%s) - start )) s"
