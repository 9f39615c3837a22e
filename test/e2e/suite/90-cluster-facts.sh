# shellcheck shell=bash
# ======================================================================================
# cluster facts: the webhook and gpuguard-lint --cluster as a least-privilege ServiceAccount,
# an API server restart, 410 Gone, RBAC refused (cluster-facts.sh, on its own control plane)
# ======================================================================================
if [[ ${E2E_CLUSTER_FACTS:-1} == 1 ]]; then
    facts_lint=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $facts_lint == /* ]] || facts_lint=$ROOT/$facts_lint
    facts_out=$(GPUGUARD_WEBHOOK=$WEBHOOK GPUGUARD_LINT=$facts_lint timeout 600 bash "$HERE/cluster-facts.sh" 2>&1)
    grep -E '^(ok|FAIL) - ' <<<"$facts_out" | sed 's/^/cluster facts: /; s/^cluster facts: \(ok\|FAIL\) - /\1 - cluster facts: /'
    read -r fp ff < <(tail -n 1 <<<"$facts_out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
    if [[ -z ${fp:-} ]]; then
        echo "FAIL - cluster facts: cluster-facts.sh did not finish: $(tail -n 3 <<<"$facts_out" | tr '\n' ' ')"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("cluster facts: did not finish")
    else
        PASSED=$((PASSED + fp)); FAILED=$((FAILED + ff))
        ((ff == 0)) || FAILED_NAMES+=("cluster facts: $ff cases")
    fi
fi
