#!/usr/bin/env bash
# gpuguard end-to-end suite: a real kube-apiserver + etcd (+ kube-scheduler) on 127.0.0.1, built
# from the Go modules pinned in controlplane/go.mod; the real gpuguard-webhook registered through
# ValidatingWebhookConfigurations (the shipped one included); cases run with kubectl 1.35.
# Then the two oracles: the API server judges the same documents as gpuguard-lint, and
# kube-scheduler judges the same pods and nodes as gpuguard-lint and gpuguard-lint --nodes.
#
#   bash test/e2e/run.sh            (from anywhere; needs root the first time for apt-get)
#
#   GPUGUARD_WEBHOOK      webhook binary (default <repo>/build/gpuguard-webhook)
#   GPUGUARD_E2E_CACHE    control-plane build cache (default /var/cache/gpuguard-e2e)
#   E2E_WEBHOOK_PORT      first webhook port (default 20500; the others use +1, +2)
#   E2E_KEEP=1            keep the work dir (logs, certs) even on success
#   E2E_ORACLE=0          skip the API-server oracle (see oracle.sh); GPUGUARD_LINT, GPUGUARD_CORPUS as there
#   E2E_SCHED_ORACLE=0    skip the scheduler oracle (see sched-oracle.sh)
#   E2E_CLUSTER_FACTS=0   skip the cluster facts cases (see cluster-facts.sh)
#   E2E_AUDIT=0           skip --pending live and the background audit (see audit.sh)
#
#   E2E_SUITE=GLOB        run only the parts of suite/ whose file names match (setup always runs;
#                         a part may rely on objects an earlier one created), e.g. E2E_SUITE='3*'
#
# The cases live in suite/, one file per group, run in file-name order after the harness
# (harness.sh: case_begin / expect_* / case_end, the webhook process and its certificates):
# 00-setup.sh, 10-75 the webhook cases, 90-94 the cluster-facts and audit suites (their own control
# planes), the two oracles and the shipped installs. A new group is a new file there.
#
# Prints "control plane: kube-apiserver vX.Y.Z, kube-scheduler vX.Y.Z, etcd vA.B.C" first, one
# line per case ("ok - ..." / "FAIL - ..."), the time taken, and finally
# "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"

T_START=$SECONDS
WEBHOOK=${GPUGUARD_WEBHOOK:-$ROOT/build/gpuguard-webhook}
[[ $WEBHOOK == /* ]] || WEBHOOK=$ROOT/$WEBHOOK
CASES=$HERE/cases
WH_PORT=${E2E_WEBHOOK_PORT:-20500}
WARN_PORT=$((WH_PORT + 1))
STRICT=strict.gpuguard.e2e
WARN=warn.gpuguard.e2e
MTLS=mtls.gpuguard.e2e
PASSED=0
FAILED=0
FAILED_NAMES=()

summary() {
    echo "e2e: took $((SECONDS - T_START)) s (control-plane build/cache check included)"
    if ((FAILED)); then printf 'e2e: failed: %s\n' "${FAILED_NAMES[@]}"; fi
    echo "$PASSED passed, $FAILED failed"
}

setup_failed() {
    echo "FAIL - setup: $*"
    FAILED=$((FAILED + 1)); FAILED_NAMES+=("setup: $*")
    for f in "$E2E_WORK"/*.log; do
        [[ -f $f ]] || continue
        echo "--- last lines of $(basename "$f")"; tail -n 20 "$f" | sed 's/^/    /'
    done
    summary
    exit 1
}

# shellcheck source=harness.sh
source "$HERE/harness.sh"
for part in "$HERE"/suite/*.sh; do
    name=$(basename "$part")
    # shellcheck disable=SC2053  # E2E_SUITE is a glob
    [[ $name == 00-* || $name == ${E2E_SUITE:-*} ]] || continue
    # shellcheck source=/dev/null
    source "$part"
done

summary
((FAILED == 0))
