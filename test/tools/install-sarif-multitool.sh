#!/usr/bin/env bash
# Installs Microsoft's SARIF multitool (the validator GitHub code scanning's rules come
# from) for the tests, from the npm package @microsoft/sarif-multitool-linux, which holds
# a self-contained Linux binary. Idempotent. Pinned by version and integrity.
#
#   MULTITOOL=$(test/tools/install-sarif-multitool.sh)    # prints the binary's path
#   GPUGUARD_TOOLS_CACHE   where it goes (default /var/cache/gpuguard-tools)
#
# Progress goes to stderr. Exit 1 if npm or the registry is not there.
set -euo pipefail

PACKAGE=@microsoft/sarif-multitool-linux
VERSION=5.7.0
INTEGRITY=sha512-NxUbpq6ISCWoTQ/NfOYEwEDKq1Heka/rMoJ5R5LMydcAZQX/X7g5mWHcgxDub+0M07LC96tZ5LZHvF1Qy3gjTA==
CACHE=${GPUGUARD_TOOLS_CACHE:-/var/cache/gpuguard-tools}
DIR=$CACHE/sarif-multitool-$VERSION

log() { printf '[install-sarif-multitool] %s\n' "$*" >&2; }
# shellcheck source=npm_pack.sh
source "$(dirname "${BASH_SOURCE[0]}")/npm_pack.sh"

if [[ ! -x $DIR/package/Sarif.Multitool ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    tarball=$(npm_pack_verified "$PACKAGE" "$VERSION" "$INTEGRITY" "$work") || exit 1
    mkdir -p "$DIR.tmp"
    tar -xzf "$tarball" -C "$DIR.tmp"
    chmod u+x "$DIR.tmp/package/Sarif.Multitool"
    rm -rf "$DIR" && mv "$DIR.tmp" "$DIR"
    log "installed $PACKAGE@$VERSION"
fi
echo "$DIR/package/Sarif.Multitool"
