"""The background audit in a chart render (docs/audit.md), for check_manifests.py: the RBAC is
get/list/watch on what it judges, writes only on the selected report API (list/delete on the
other, for a format switch), the Lease in the release namespace only; the Deployment runs it
with the enforce rendering of the policy and leader election; none of it when it is off."""

# What the audit must be able to read whatever the webhook rules say (gpuguard.webhookRules
# covers the custom resources; chart_test.sh compares the whole list with gpuguard-webhook
# --print-audit-resources when that binary knows it).
CORE_READS = {("", "pods"), ("", "replicationcontrollers"), ("", "podtemplates"), ("", "limitranges"),
              ("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"), ("apps", "replicasets"),
              ("batch", "jobs"), ("batch", "cronjobs"), ("karpenter.sh", "nodepools")}
REPORTS = {"openreports": ("openreports.io", {"reports", "clusterreports"}),
           "wgpolicyk8s": ("wgpolicyk8s.io", {"policyreports", "clusterpolicyreports"})}
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "get", "list", "patch", "watch"]


def audit_enabled(values):
    enabled = values.get("audit", {}).get("enabled", "auto")
    return values["mode"] == "audit" if str(enabled) == "auto" else bool(enabled)


def _granted(role, verbs):
    return {(g, r) for rule in role.get("rules", []) if sorted(rule.get("verbs", [])) == verbs
            for g in rule.get("apiGroups", []) for r in rule.get("resources", [])}


def _check_cluster_role(check, role, values):
    audit = values.get("audit", {})
    fmt = audit.get("reportFormat", "openreports")
    other = "wgpolicyk8s" if fmt == "openreports" else "openreports"
    rules = role.get("rules", [])
    check(all(set(r.get("verbs", [])) <= set(WRITE) and "*" not in r.get("resources", []) and
              not r.get("resourceNames") and not r.get("nonResourceURLs") for r in rules),
          "audit ClusterRole: no wildcard, no verb beyond get/list/watch/create/patch/delete")
    reads = _granted(role, READ)
    extra = {(e["group"], e["resource"]) for e in audit.get("extraResources", [])}
    missing = (CORE_READS | extra) - reads
    check(not missing, f"audit ClusterRole: get/list/watch on every audited kind (missing {sorted(missing)})")
    check(not any(g in ("", "rbac.authorization.k8s.io") and r in ("secrets", "serviceaccounts", "roles", "clusterroles")
                  for g, r in reads), "audit ClusterRole: no secrets, service accounts or RBAC objects")
    group, plurals = REPORTS[fmt]
    check(_granted(role, WRITE) == {(group, p) for p in plurals},
          f"audit ClusterRole: writes ({'/'.join(WRITE)}) only on {group} {sorted(plurals)} (reportFormat {fmt})")
    ogroup, oplurals = REPORTS[other]
    check(_granted(role, ["delete", "list"]) == {(ogroup, p) for p in oplurals},
          f"audit ClusterRole: list/delete only on {ogroup} (its own reports after a format switch)")


def _check_lease_role(check, role, ns):
    rules = role.get("rules", [])
    leases = all(r.get("apiGroups") == ["coordination.k8s.io"] and r.get("resources") == ["leases"] for r in rules)
    create = [r for r in rules if r.get("verbs") == ["create"] and not r.get("resourceNames")]
    named = [r for r in rules if sorted(r.get("verbs", [])) == ["get", "update"] and r.get("resourceNames") == ["gpuguard-audit"]]
    check(role.get("metadata", {}).get("namespace") == ns and leases and len(create) == 1 and len(named) == 1 and
          len(rules) == 2, f"the leader-election Role: leases in {ns} only, create, and get/update of gpuguard-audit only")


def _check_bindings(check, rbac, ns):
    for b in (o for o in rbac if o["kind"] in ("ClusterRoleBinding", "RoleBinding") and "-audit" in o["metadata"]["name"]):
        check(b.get("subjects") == [{"kind": "ServiceAccount", "name": "gpuguard-webhook", "namespace": ns}],
              f"{b['kind']} {b['metadata']['name']}: the only subject is the webhook's ServiceAccount")


def _check_deployment(check, container, values, on):
    argv = container.get("args", [])
    audit_args = [a for a in argv if a.startswith(("--audit", "--leader-elect"))]
    env = {e["name"]: e for e in container.get("env", [])}
    if not on:
        check(not audit_args, f"no --audit/--leader-elect flags while the audit is off (got {audit_args})")
        return
    audit = values.get("audit", {})
    want = ["--audit=on", "--audit-policy=/etc/gpuguard/policy/enforce-policy.yaml",
            f"--audit-report-format={audit.get('reportFormat')}", "--leader-elect=true",
            "--leader-elect-resource-name=gpuguard-audit", "--leader-elect-resource-namespace=$(POD_NAMESPACE)"]
    want += [f"--audit-extra-resource={e['resource']}.{e['group']}" for e in audit.get("extraResources", [])]
    want += [f"--audit-exclude-namespace={n}" for n in audit.get("excludeNamespaces", [])]
    missing = [w for w in want if w not in argv]
    check(not missing, "the audit's flags, leader election included" + (f" (missing: {missing})" if missing else ""))
    for name, path in (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace")):
        check(env.get(name, {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == path,
              f"env {name} from {path} (the Lease identity and namespace)")


def check_audit(check, objs, rbac, container, policy_cm, yaml, values, ns):
    """values: the merged chart values (for a kustomize render with components/background-audit,
    the chart's audit defaults); None for a kustomize render without it."""
    on = values is not None and audit_enabled(values)
    audit_rbac = [o for o in rbac if "-audit" in o["metadata"]["name"]]
    _check_deployment(check, container, values or {}, on)
    enforce_text = policy_cm.get("data", {}).get("enforce-policy.yaml")
    if not on:
        check(not audit_rbac, "no audit RBAC while the audit is off")
        check(enforce_text is None, "no enforce-policy.yaml while the audit is off")
        return
    roles = [o for o in audit_rbac if o["kind"] == "ClusterRole"]
    leases = [o for o in audit_rbac if o["kind"] == "Role"]
    check(len(roles) == 1 and len(leases) == 1 and len(audit_rbac) == 4,
          f"audit RBAC: a ClusterRole, a Role and their bindings (got {[o['kind'] for o in audit_rbac]})")
    if roles:
        _check_cluster_role(check, roles[0], values)
    if leases:
        _check_lease_role(check, leases[0], ns)
    _check_bindings(check, rbac, ns)
    enforce = yaml.safe_load(enforce_text or "") or {}
    check(enforce == values["policy"], "enforce-policy.yaml is the values' policy as enforce renders it (rules unchanged)")
