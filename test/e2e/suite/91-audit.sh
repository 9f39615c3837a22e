# shellcheck shell=bash
# ======================================================================================
# issue 27: gpuguard-lint --cluster --pending against kube-scheduler, and the background audit
# into OpenReports with two replicas (audit.sh, on its own control plane)
# ======================================================================================
if [[ ${E2E_AUDIT:-1} == 1 ]]; then
    audit_lint=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $audit_lint == /* ]] || audit_lint=$ROOT/$audit_lint
    audit_out=$(GPUGUARD_WEBHOOK=$WEBHOOK GPUGUARD_LINT=$audit_lint timeout 600 bash "$HERE/audit.sh" 2>&1)
    grep -E '^(ok|FAIL|skip) - ' <<<"$audit_out"
    read -r ap af < <(tail -n 1 <<<"$audit_out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
    if [[ -z ${ap:-} ]]; then
        echo "FAIL - audit: audit.sh did not finish: $(tail -n 3 <<<"$audit_out" | tr '\n' ' ')"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("audit: did not finish")
    else
        PASSED=$((PASSED + ap)); FAILED=$((FAILED + af))
        ((af == 0)) || FAILED_NAMES+=("audit: $af cases")
    fi
fi
