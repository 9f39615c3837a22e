# shellcheck shell=bash
# More background-audit cases, sourced by audit.sh after audit_cases.sh (its helpers: ok/bad,
# until_true, kc, start_replica, metric, report_rows, gpu_deployment, $W, $AUDIT_NS, $LEASE_NS):
#   - a policy reload: the --audit-policy file in a ConfigMap-style volume (kubelet swaps the
#     ..data symlink) changes, and the objects are judged again with the new rules;
#   - a least-privilege ServiceAccount with only the shipped RBAC (manifests/base/rbac.yaml and
#     manifests/components/background-audit/rbac.yaml): the audit works; without `list` on one
#     resource, that resource is `refused` (a log line naming the verb, synced 0) and the rest
#     goes on.

replica_pids() { for v in PID_a PID_b PID_c PID_d PID_w PID_r PID_sa PID_sa2; do [[ -n ${!v:-} ]] && echo "${!v}"; done; }
stop_replicas() {  # SIGTERM every replica still running (the leader releases the Lease)
    local p
    for p in $(replica_pids); do kill -TERM "$p" 2>/dev/null; done
    for p in $(replica_pids); do until_true 10 bash -c "! kill -0 $p 2>/dev/null"; done
}
stop_replicas
without_format=()
for a in "${election_args[@]}"; do [[ $a == --audit-report-format=* ]] || without_format+=("$a"); done
election_args=("${without_format[@]}")
rule_row() { report_rows | grep -q "^$1 $2 "; }  # rule_row Kind/name RULE
holder() { kc get lease gpuguard-audit -n "$LEASE_NS" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

# ---- a policy reload (ConfigMap-style volume) ----------------------------------------------------
PV=$W/policy-volume
mkdir -p "$PV/..v1" "$PV/..v2"
printf 'rules:\n  gpu-missing-toleration: "off"\n' >"$PV/..v1/audit-policy.yaml"
printf 'rules: {}\n' >"$PV/..v2/audit-policy.yaml"
ln -s ..v1 "$PV/..data" && ln -s ..data/audit-policy.yaml "$PV/audit-policy.yaml"
gpu_deployment reloaded 0 | kc create -f - >/dev/null || { bad "audit setup: Deployment reloaded"; return 0; }
base_args=("${election_args[@]}")
election_args+=(--audit-policy="$PV/audit-policy.yaml")
start_replica r "$APORT" || { bad "audit setup: webhook replica r: $(tail -n 5 "$E2E_WORK/webhook-r.log")"; return 0; }
election_args=("${base_args[@]}")
judged_without_rule() { has_rows_of Deployment/reloaded && ! rule_row Deployment/reloaded gpu-missing-toleration; }
if until_true 20 judged_without_rule; then
    t=$SECONDS
    ln -s ..v2 "$PV/..data_tmp" && mv -T "$PV/..data_tmp" "$PV/..data"  # what the kubelet does
    if until_true 20 rule_row Deployment/reloaded gpu-missing-toleration; then
        ok "audit: the --audit-policy file changed in its ConfigMap volume (..data swapped) re-judges: gpu-missing-toleration, off before, is reported for Deployment/reloaded $((SECONDS - t)) s later"
    else
        bad "audit: policy reload: no gpu-missing-toleration after 20 s: [$(report_rows | tr '\n' ';')]; log: $(grep -i polic "$E2E_WORK/webhook-r.log" | tail -n 3 | tr '\n' ' ')"
    fi
else
    bad "audit: with gpu-missing-toleration off: [$(report_rows | tr '\n' ';')]; log: $(tail -n 3 "$E2E_WORK/webhook-r.log" | tr '\n' ' ')"
fi
stop_replicas

# ---- a least-privilege ServiceAccount --------------------------------------------------------------
kc create serviceaccount gpuguard-webhook -n "$LEASE_NS" >/dev/null 2>&1
kc apply -f "$ROOT/manifests/base/rbac.yaml" -f "$ROOT/manifests/components/background-audit/rbac.yaml" >/dev/null ||
    { bad "audit setup: the shipped RBAC"; return 0; }
e2e_token_kubeconfig gpuguard-webhook "$LEASE_NS" >"$W/sa.kubeconfig" || { bad "audit setup: a token"; return 0; }
gpu_deployment least 0 | kc create -f - >/dev/null || { bad "audit setup: Deployment least"; return 0; }
KUBECONFIG=$W/sa.kubeconfig start_replica sa "$APORT" || { bad "audit setup: webhook replica sa: $(tail -n 5 "$E2E_WORK/webhook-sa.log")"; return 0; }
if until_true 20 rule_row Deployment/least gpu-missing-toleration && [[ $(holder) == sa* ]] &&
   ! grep -q 'refused' "$E2E_WORK/webhook-sa.log"; then
    ok "audit: as ServiceAccount gpuguard-webhook with only the shipped RBAC: the Lease ($(holder)), Deployment/least reported, nothing refused"
else
    bad "audit: least privilege: holder $(holder), rows [$(report_rows | tr '\n' ';')]; log: $(grep -i 'refused\|forbidden' "$E2E_WORK/webhook-sa.log" | head -n 3 | tr '\n' ' ')"
fi
stop_replicas
# One verb taken away: list on batch jobs and cronjobs (the ClusterRole's third rule).
if [[ $(kc get clusterrole gpuguard-audit -o jsonpath='{.rules[2].apiGroups[0]}') == batch ]] &&
   kc patch clusterrole gpuguard-audit --type=json -p '[{"op":"replace","path":"/rules/2/verbs","value":["get","watch"]}]' >/dev/null; then
    gpu_deployment least2 0 | kc create -f - >/dev/null
    KUBECONFIG=$W/sa.kubeconfig start_replica sa2 "$APORT" || { bad "audit setup: webhook replica sa2: $(tail -n 5 "$E2E_WORK/webhook-sa2.log")"; return 0; }
    refused_logged() { grep 'audit: jobs.batch refused: list' "$E2E_WORK/webhook-sa2.log" | grep -q 'cannot list resource'; }
    if until_true 20 refused_logged && [[ $(metric "$APORT" 'gpuguard_audit_resource_synced{resource="jobs.batch"}') == 0 ]] &&
       until_true 20 rule_row Deployment/least2 gpu-missing-toleration &&
       curl -sf --cacert "$W/ca.crt" "https://127.0.0.1:$APORT/healthz" -o /dev/null; then
        ok "audit: without list on jobs: one log line ($(grep -o 'audit: jobs.batch refused: list[^"]\{0,60\}' "$E2E_WORK/webhook-sa2.log" | head -n 1)...), jobs.batch not synced, the rest audited (Deployment/least2 reported), the webhook healthy"
    else
        bad "audit: a missing verb: synced $(metric "$APORT" 'gpuguard_audit_resource_synced{resource="jobs.batch"}'); rows [$(report_rows | tr '\n' ';')]; log: $(grep -i 'jobs' "$E2E_WORK/webhook-sa2.log" | head -n 3 | tr '\n' ' ')"
    fi
else
    bad "audit setup: the ClusterRole's third rule is not batch's (rbac.yaml changed?)"
fi
stop_replicas
