# shellcheck shell=bash
# ---- policy file changed on disk, no restart --------------------------------------------
case_begin "policy file changed on disk takes effect without a restart"
# a RayCluster never stored in e2e-warn (so every dry-run apply is a create the webhook judges)
sed 's/name: rc-fractional$/name: rc-fractional-reload/' "$CASES/raycluster-fractional.yaml" >"$E2E_WORK/rc-reload.yaml"
warn_denies() {
    kc apply --dry-run=server -n e2e-warn -f "$E2E_WORK/rc-reload.yaml"
    grep -qF "$(denied_by $WARN)" <<<"$OUT"
}
warn_admits() {
    kc apply --dry-run=server -n e2e-warn -f "$E2E_WORK/rc-reload.yaml"
    ((RC == 0))
}
cp "$WH/warn-policy.yaml" "$WH/warn-policy.yaml.orig"
sed 's/gpu-fractional: warning/gpu-fractional: error/' "$WH/warn-policy.yaml.orig" >"$WH/warn-policy.yaml.new"
mv -f "$WH/warn-policy.yaml.new" "$WH/warn-policy.yaml"
poll_until "policy reload (error)" 30 warn_denies || problem "gpu-fractional: error in the policy file did not deny within 30 s"
note_output
expect_out "[gpu-fractional]"
cp "$WH/warn-policy.yaml.orig" "$WH/warn-policy.yaml.new" && mv -f "$WH/warn-policy.yaml.new" "$WH/warn-policy.yaml"
poll_until "policy reload (warning)" 30 warn_admits || problem "restoring the policy file did not admit again within 30 s"
note_output
expect_warning gpu-fractional
kill -0 "$PID_warn" 2>/dev/null || problem "warn webhook process is gone"
case_end
