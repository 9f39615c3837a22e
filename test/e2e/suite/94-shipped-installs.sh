# shellcheck shell=bash
# ======================================================================================
# the shipped installs (every chart profile, the script and kustomize installs) through a
# strict server dry run on the same control plane (test/ship/apiserver_test.sh, which ctest
# skips on a machine where this suite has not built the control plane yet)
# ======================================================================================
if [[ ${E2E_SHIP:-1} == 1 ]]; then
    if ship_out=$(GPUGUARD_E2E_CACHE=${GPUGUARD_E2E_CACHE:-/var/cache/gpuguard-e2e} \
                  timeout 600 bash "$ROOT/test/ship/apiserver_test.sh" "$ROOT/build" 2>&1); then
        echo "ok - shipped installs accepted by the API server: $(tail -n 1 <<<"$ship_out")"
        PASSED=$((PASSED + 1))
    else
        printf '%s\n' "$ship_out" | grep -E '^(FAIL|SKIP)' || true
        echo "FAIL - shipped installs: $(tail -n 1 <<<"$ship_out")"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("shipped installs: server dry run")
    fi
fi
