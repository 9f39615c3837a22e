# shellcheck shell=bash
# The background audit's cases (issue 27 item 5), sourced by audit.sh once the webhook has
# --audit and the OpenReports CRDs are served. Uses audit.sh's ok/bad/skip/until_true/kc, $W,
# $WEBHOOK, $LINT.

AUDIT_NS=audit-ml
LEASE_NS=gpuguard-system
e2e_ns "$AUDIT_NS" && kc create namespace "$LEASE_NS" >/dev/null || { bad "audit setup: namespaces"; finish; }

# ---- workloads that exist before any webhook starts ------------------------------------------
gpu_deployment() {  # gpu_deployment NAME FIXED(0|1): FIXED tolerates the GPU taint and pins the driver
    local extra=""
    (($2)) && extra='"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],
      "nodeSelector":{"nvidia.com/cuda.driver.major":"550"},'
    cat <<EOF
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"$1","namespace":"$AUDIT_NS"},
 "spec":{"replicas":1,"selector":{"matchLabels":{"app":"$1"}},
  "template":{"metadata":{"labels":{"app":"$1"}},"spec":{$extra"containers":[{"name":"c",
   "image":"nvcr.io/nvidia/pytorch:24.05-py3","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}
EOF
}
{ gpu_deployment vllm 0; gpu_deployment clean 1; } | kc create -f - >/dev/null &&
    kc create -f - >/dev/null <<EOF || { bad "audit setup: workloads"; finish; }
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare","namespace":"$AUDIT_NS"},
 "spec":{"containers":[{"name":"c","image":"nvcr.io/nvidia/pytorch:24.05-py3",
  "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}
EOF

# ---- webhook replicas ------------------------------------------------------------------------
e2e_make_ca "$W" ca
e2e_make_cert "$W" ca serving "/CN=gpuguard-audit-e2e" serverAuth "IP:127.0.0.1"
APORT=$(e2e_pick_port "${E2E_AUDIT_PORT:-20580}" 2) || { bad "audit setup: no free port"; finish; }
ELECTION=0
grep -q -- '--leader-elect' <<<"$WEBHOOK_HELP" && ELECTION=1
election_args=()
((ELECTION)) && election_args=(--leader-elect=true --leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s
                                --leader-elect-retry-period=1s --leader-elect-resource-namespace="$LEASE_NS")
start_replica() {  # start_replica NAME PORT : one webhook with the audit on and the cluster's facts (admin kubeconfig)
    POD_NAME=$1 POD_NAMESPACE=$LEASE_NS e2e_bg "webhook-$1" "$WEBHOOK" \
        --tls-cert-file="$W/serving.crt" --tls-private-key-file="$W/serving.key" \
        --port="$2" --bind-address=127.0.0.1 --kubeconfig="$KUBECONFIG" --cluster-facts=on \
        --audit=on --audit-resync-interval=1h "${election_args[@]}"
    eval "PID_$1=$E2E_LAST_PID"
    until_true 30 curl -sf --cacert "$W/ca.crt" "https://127.0.0.1:$2/healthz" -o /dev/null
}
metric() {  # metric PORT SERIES -> its value ("" if absent)
    curl -sS --max-time 3 --cacert "$W/ca.crt" "https://127.0.0.1:$1/metrics" 2>/dev/null | awk -v s="$2" '$1 == s { print $2 }'
}
# report_rows [RESOURCE] : "Kind/name rule result" per result of the namespace's reports, sorted
report_rows() {
    kc get "${1:-reports.openreports.io}" -n "$AUDIT_NS" -o json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["items"]:
    for x in r.get("results") or []:
        o = (x.get("resources") or [{}])[0]
        print("%s/%s %s %s" % (o.get("kind"), o.get("name"), x.get("policy"), x.get("result")))' | sort
}
# lint_rows : the same rows from gpuguard-lint --cluster (the same facts) on `kubectl get -o json`
# of the same objects
lint_rows() {
    kc get deployments,pods -n "$AUDIT_NS" -o json >"$W/objects.json" &&
        "$LINT" --cluster --format json "$W/objects.json" 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if not f.get("suppressed"):
        print("%s/%s %s %s" % (f["object"]["kind"], f["object"]["name"], f["rule"],
                               "fail" if f["severity"] == "error" else "warn"))' | sort
}
rows_match_lint() { [[ -n $(report_rows) && $(report_rows) == "$(lint_rows)" ]]; }
no_rows_of() { ! report_rows | grep -q "^$1 "; }
has_rows_of() { report_rows | grep -q "^$1 "; }

start_replica a "$APORT" || { bad "audit setup: webhook replica a: $(tail -n 5 "$E2E_WORK/webhook-a.log")"; finish; }

# ---- cases -----------------------------------------------------------------------------------------
t=$SECONDS
if until_true 45 rows_match_lint && no_rows_of Deployment/clean; then
    ok "audit: workloads created before the webhook are in Report $AUDIT_NS/gpuguard within $((SECONDS - t)) s, the same results as gpuguard-lint on kubectl get -o json: $(report_rows | tr '\n' ';')"
else
    bad "audit: report vs gpuguard-lint: report [$(report_rows | tr '\n' ';')] lint [$(lint_rows | tr '\n' ';')]; log: $(tail -n 3 "$E2E_WORK/webhook-a.log" | tr '\n' ' ')"
fi
summary_ok() {
    kc get reports.openreports.io gpuguard -n "$AUDIT_NS" -o json | python3 -c '
import json, sys
r = json.load(sys.stdin); s = r["summary"]; res = r["results"]
assert r["source"] == "gpuguard", r.get("source")
assert s["fail"] == sum(x["result"] == "fail" for x in res) and s["warn"] == sum(x["result"] == "warn" for x in res)
assert all(x["source"] == "gpuguard" and x["properties"].get("field") and x["timestamp"]["seconds"] > 0 for x in res)'
}
kc get reports.openreports.io gpuguard -n "$AUDIT_NS" -o json >"$W/report.json" 2>&1  # kept with E2E_KEEP=1
if summary_ok 2>"$W/summary.err"; then
    ok "audit: the report's summary counts its results; each result has source gpuguard, the field path and a timestamp"
else
    bad "audit: report fields: $(tail -n 2 "$W/summary.err" | tr '\n' ' ')"
fi

# The fix and the delete are asserted only of results that were there (else they prove nothing).
has_rows_of Deployment/vllm && has_rows_of Pod/bare || { bad "audit: no results of Deployment/vllm and Pod/bare to clear"; return 0; }
t=$SECONDS
kc patch deployment vllm -n "$AUDIT_NS" --type=merge -p '{"spec":{"template":{"spec":{
  "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],
  "nodeSelector":{"nvidia.com/cuda.driver.major":"550"}}}}}' >/dev/null
if until_true 10 no_rows_of Deployment/vllm; then
    ok "audit: kubectl patch with the fix (toleration, driver pin) clears the Deployment's results in $((SECONDS - t)) s (watch, no resync)"
else
    bad "audit: fixed Deployment still reported after 10 s: $(report_rows | tr '\n' ';')"
fi
t=$SECONDS
kc delete pod bare -n "$AUDIT_NS" --wait=false >/dev/null
report_gone() { [[ -z $(kc get reports.openreports.io -n "$AUDIT_NS" -o name 2>/dev/null) ]]; }
if until_true 10 report_gone; then
    ok "audit: deleting the last object with findings removes its results and the empty report in $((SECONDS - t)) s"
else
    bad "audit: after the delete: $(kc get reports.openreports.io -n "$AUDIT_NS" -o name | tr '\n' ' ') [$(report_rows | tr '\n' ';')]"
fi

if ((!ELECTION)); then
    skip "audit: two replicas and a leader kill: gpuguard-webhook has no --leader-elect flags yet (WP-A's election not wired on this branch)"
    return 0
fi
leader_of() { metric "$1" gpuguard_audit_leader; }
holder() { kc get lease gpuguard-audit -n "$LEASE_NS" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
start_replica b $((APORT + 1)) || { bad "audit setup: webhook replica b"; return 0; }
one_leader() { [[ $(( $(leader_of "$APORT" || echo 0) + $(leader_of $((APORT + 1)) || echo 0) )) == 1 ]]; }
if until_true 10 one_leader && [[ $(holder) == a* ]]; then
    ok "audit: two replicas, one leader: replica a holds Lease $LEASE_NS/gpuguard-audit ($(holder)), b stands by"
else
    bad "audit: leaders: a=$(leader_of "$APORT") b=$(leader_of $((APORT + 1))) holder=$(holder)"
fi
writes_b() { curl -sS --cacert "$W/ca.crt" "https://127.0.0.1:$((APORT + 1))/metrics" | awk '$1 ~ /^gpuguard_audit_report_writes_total/ { n += $2 } END { print n + 0 }'; }
gpu_deployment late 0 | kc create -f - >/dev/null
if until_true 10 has_rows_of Deployment/late && [[ $(writes_b) == 0 ]]; then
    ok "audit: only the Lease holder writes (replica b: 0 report writes)"
else
    bad "audit: new Deployment under replica a: rows [$(report_rows | tr '\n' ';')], b's writes $(writes_b)"
fi
t=$SECONDS
kill -9 "$PID_a"
e2e_forget_pid "$PID_a" 2>/dev/null || true
gpu_deployment later 0 | kc create -f - >/dev/null
b_leads() { [[ $(leader_of $((APORT + 1))) == 1 && $(holder) == b* ]]; }
if until_true 20 b_leads && until_true 15 has_rows_of Deployment/later &&
   [[ $(kc get reports.openreports.io -n "$AUDIT_NS" -o name | wc -l) == 1 ]]; then
    ok "audit: kill -9 of the leader: replica b takes the Lease and reports a new Deployment in $((SECONDS - t)) s; still one report"
else
    bad "audit: takeover: b leader=$(leader_of $((APORT + 1))) holder=$(holder) rows [$(report_rows | tr '\n' ';')]"
fi
# SIGTERM: the leader releases the Lease (holderIdentity ""), so a standby takes it within a few
# retry periods (client-go: 2.2 x retry at most) instead of a lease duration.
start_replica c $((APORT)) || { bad "audit setup: webhook replica c"; return 0; }
t=$SECONDS
kill -TERM "$PID_b"
c_leads() { [[ $(leader_of "$APORT") == 1 && $(holder) == c* ]]; }
if until_true 5 c_leads; then
    ok "audit: SIGTERM of the leader releases the Lease: replica c holds it after $((SECONDS - t)) s (lease 4 s, retry 1 s)"
else
    bad "audit: release on SIGTERM: c leader=$(leader_of "$APORT") holder=$(holder) after $((SECONDS - t)) s"
fi
# Deleted while no replica ran: the next leader's first full scan removes its results.
kill -TERM "$PID_c"
until_true 10 bash -c "! kill -0 $PID_c 2>/dev/null"
kc delete deployment later -n "$AUDIT_NS" >/dev/null
has_rows_of Deployment/later || bad "audit: Deployment/later had no results before the restart"
start_replica d "$APORT" || { bad "audit setup: webhook replica d"; return 0; }
t=$SECONDS
if until_true 15 no_rows_of Deployment/later && has_rows_of Deployment/late; then
    ok "audit: an object deleted while no replica ran loses its results after the next leader's first scan ($((SECONDS - t)) s); the others stay"
else
    bad "audit: stale results after a restart: [$(report_rows | tr '\n' ';')]"
fi

# --audit-report-format=wgpolicyk8s: the same results as PolicyReports. The CRD here is a minimal
# one of our own (group, version, kinds, any content): Kyverno's copy is not vendored, so this
# checks what gpuguard writes and where, not Kyverno's schema.
kc apply -f - >/dev/null <<'YAML' || { bad "audit setup: a wgpolicyk8s.io PolicyReport CRD"; return 0; }
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: policyreports.wgpolicyk8s.io}
spec:
  group: wgpolicyk8s.io
  names: {kind: PolicyReport, plural: policyreports, singular: policyreport, listKind: PolicyReportList, shortNames: [polr]}
  scope: Namespaced
  versions:
  - {name: v1alpha2, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterpolicyreports.wgpolicyk8s.io}
spec:
  group: wgpolicyk8s.io
  names: {kind: ClusterPolicyReport, plural: clusterpolicyreports, singular: clusterpolicyreport, listKind: ClusterPolicyReportList, shortNames: [cpolr]}
  scope: Cluster
  versions:
  - {name: v1alpha2, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
YAML
wg_listable() { kc get policyreports.wgpolicyk8s.io -A -o name >/dev/null 2>&1 && kc get clusterpolicyreports.wgpolicyk8s.io -o name >/dev/null 2>&1; }
until_true 30 wg_listable || { bad "audit setup: the PolicyReport CRDs are not served"; return 0; }
kill -TERM "$PID_d"
until_true 10 bash -c "! kill -0 $PID_d 2>/dev/null"
openreports_rows=$(report_rows)  # what the Report held before the switch
election_args+=(--audit-report-format=wgpolicyk8s)
start_replica w "$APORT" || { bad "audit setup: webhook replica w (wgpolicyk8s)"; return 0; }
t=$SECONDS
# The same results as PolicyReports, and (design §4.4, a format switch) our openreports Report
# deleted once the first scan has written them.
wg_same() { [[ -n $openreports_rows && $(report_rows policyreports.wgpolicyk8s.io) == "$openreports_rows" && -z $(report_rows) ]]; }
if until_true 15 wg_same && [[ -z $(kc get policyreport gpuguard -n "$AUDIT_NS" -o jsonpath='{.source}') ]]; then
    ok "audit: --audit-report-format=wgpolicyk8s writes PolicyReport $AUDIT_NS/gpuguard with the Report's results, no top-level source, and deletes our Report ($((SECONDS - t)) s)"
else
    bad "audit: wgpolicyk8s: [$(report_rows policyreports.wgpolicyk8s.io | tr '\n' ';')] vs [$openreports_rows] (Report now: [$(report_rows | tr '\n' ';')])"
fi
