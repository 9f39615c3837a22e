# shellcheck shell=bash
# ======================================================================================
# oracle: the API server judges the built-in kinds itself; gpuguard-lint must agree
# ======================================================================================
if [[ ${E2E_ORACLE:-1} == 1 ]]; then
    kc delete validatingwebhookconfiguration gpuguard-e2e
    LINT=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $LINT == /* ]] || LINT=$ROOT/$LINT
    if [[ -x $LINT ]]; then
        e2e_oracle "$LINT" "${GPUGUARD_CORPUS:-$ROOT/../shared/corpus/real}" "$E2E_WORK/oracle.md" 0
        read -r op of <<<"$E2E_ORACLE_COUNTS"
        PASSED=$((PASSED + op)); FAILED=$((FAILED + of))
        ((of == 0)) || FAILED_NAMES+=("oracle: $of documents where gpuguard-lint and the API server disagree")
    else
        echo "FAIL - oracle: no gpuguard-lint at $LINT (set GPUGUARD_LINT, or E2E_ORACLE=0 to skip)"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("oracle: no gpuguard-lint")
    fi
fi
