# shellcheck shell=bash
# ======================================================================================
# scheduler oracle: kube-scheduler places the same pods on the same nodes as gpuguard says
# ======================================================================================
if [[ ${E2E_SCHED_ORACLE:-1} == 1 ]]; then
    LINT=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $LINT == /* ]] || LINT=$ROOT/$LINT
    if [[ ! -x $LINT ]]; then
        echo "FAIL - scheduler oracle: no gpuguard-lint at $LINT (set GPUGUARD_LINT, or E2E_SCHED_ORACLE=0 to skip)"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("scheduler oracle: no gpuguard-lint")
    elif ! e2e_start_scheduler; then
        echo "FAIL - scheduler oracle: kube-scheduler did not start"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("scheduler oracle: kube-scheduler did not start")
    else
        kc delete validatingwebhookconfiguration gpuguard-e2e --ignore-not-found
        e2e_sched_oracle "$LINT" "$E2E_WORK/sched-oracle.md" 0
        read -r sp sf <<<"$E2E_SCHED_COUNTS"
        PASSED=$((PASSED + sp)); FAILED=$((FAILED + sf))
        ((sf == 0)) || FAILED_NAMES+=("scheduler oracle: $sf cases where gpuguard and kube-scheduler disagree")
    fi
fi
