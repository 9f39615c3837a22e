#!/usr/bin/env python3
"""Checks one rendered gpuguard install (the output of `kubectl kustomize`, or of
`helm template gpuguard manifests/chart/gpuguard -n gpuguard-system -f PROFILE`).

    check_manifests.py RENDERED.yaml MODE [--cert-manager] [--priority-class] [--monitoring]
                       [--background-audit POLICY]
    check_manifests.py RENDERED.yaml --chart-values values.yaml PROFILE.yaml

MODE is enforce or audit. With --chart-values the expectations (mode, replicas, the
certificate source, the Secret, PriorityClass, /mutate, NetworkPolicy, monitoring) come
from the chart's values merged the way helm merges them. Prints "ok - ..." / "FAIL - ..."
lines; exits 0. Needs PyYAML (Debian: python3-yaml).
"""
import argparse
import sys

import yaml

from check_audit import audit_enabled, check_audit

NS = "gpuguard-system"
APP = {"app.kubernetes.io/name": "gpuguard", "app.kubernetes.io/component": "webhook"}
SECRET = "gpuguard-webhook-tls"

# What the webhook must see: group -> resources. Operations CREATE and UPDATE only.
EXPECTED_RULES = {
    "": {"pods", "replicationcontrollers", "podtemplates"},
    "apps": {"deployments", "statefulsets", "daemonsets", "replicasets"},
    "batch": {"jobs", "cronjobs"},
    "ray.io": {"rayclusters", "rayjobs", "rayservices"},
    "kubeflow.org": {"pytorchjobs", "tfjobs", "mpijobs", "xgboostjobs", "paddlejobs", "jaxjobs"},
    "trainer.kubeflow.org": {"trainjobs"},
    "jobset.x-k8s.io": {"jobsets"},
    "leaderworkerset.x-k8s.io": {"leaderworkersets"},
    "serving.kserve.io": {"inferenceservices", "servingruntimes", "llminferenceservices"},
    "batch.volcano.sh": {"jobs"},
    "argoproj.io": {"workflows", "cronworkflows", "workflowtemplates", "clusterworkflowtemplates"},
    "apps.nvidia.com": {"nimservices"},
    "nvidia.com": {"dynamographdeployments"},
    "sparkoperator.k8s.io": {"sparkapplications", "scheduledsparkapplications"},
    "serving.knative.dev": {"services", "configurations"},
}
# Of those, the cluster-scoped ones (their rule says scope: Cluster).
CLUSTER_SCOPED = {"clusterworkflowtemplates"}

results = []


def check(ok, what):
    results.append(bool(ok))
    print(("ok - " if ok else "FAIL - ") + what)


def merged(base, over):
    """Helm's merge of values files: maps merge key by key, anything else replaces."""
    out = dict(base)
    for k, v in (over or {}).items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def chart_expectations(files):
    """What a chart render must look like, from its values files."""
    values = {}
    for f in files:
        values = merged(values, yaml.safe_load(open(f)) or {})
    source = values["certificate"]["source"]
    prio = values.get("priorityClassName") or ("gpuguard-webhook" if values["priorityClass"]["create"] else None)
    return {
        "values": values,
        "mode": values["mode"],
        "replicas": values["replicas"],
        # auto renders cert-manager's objects whenever no cluster is reachable (helm template)
        "cert_manager": source in ("certManager", "auto"),
        "secret": values["certificate"]["existingSecret"]["name"] if source == "existingSecret" else SECRET,
        "priority_class": prio,
        "mutate": values["mutate"]["enabled"] and values["mode"] == "enforce",
        "object_selector": bool(values["webhook"]["objectSelector"]),
        "network_policy": values["networkPolicy"]["enabled"],
        "monitoring": values["serviceMonitor"]["enabled"],
        "rule": values["serviceMonitor"]["enabled"] and values["serviceMonitor"]["prometheusRule"]["enabled"],
        "dashboard": values["grafanaDashboard"]["enabled"],
        "cluster_facts": values["clusterFacts"]["enabled"],
        "audit": audit_enabled(values),
    }


# Cluster facts (docs/cluster-facts.md): exactly get/list/watch on what the webhook reads.
FACT_RESOURCES = {("", "nodes"), ("", "namespaces"), ("resource.k8s.io", "deviceclasses"),
                  ("resource.k8s.io", "resourceclaimtemplates"), ("resource.k8s.io", "resourceclaims"),
                  ("resource.k8s.io", "resourceslices"),
                  ("karpenter.sh", "nodepools"), ("node.k8s.io", "runtimeclasses")}


def check_cluster_facts_rbac(objs, rbac, ns):
    roles = [o for o in rbac if o["kind"] == "ClusterRole"]
    bindings = [o for o in rbac if o["kind"] == "ClusterRoleBinding"]
    check(len(roles) == 1 and len(bindings) == 1 and len(rbac) == 2,
          f"one ClusterRole and one ClusterRoleBinding, nothing else (got {[o['kind'] for o in rbac]})")
    if len(roles) != 1 or len(bindings) != 1:
        return
    granted = set()
    verbs_ok = True
    for rule in roles[0].get("rules", []):
        verbs_ok = verbs_ok and sorted(rule.get("verbs", [])) == ["get", "list", "watch"]
        verbs_ok = verbs_ok and not rule.get("resourceNames") and not rule.get("nonResourceURLs")
        granted |= {(g, r) for g in rule.get("apiGroups", []) for r in rule.get("resources", [])}
    check(verbs_ok, "the ClusterRole grants get, list and watch only")
    check(granted == FACT_RESOURCES, f"the ClusterRole covers exactly the fact resources (got {sorted(granted)})")
    b = bindings[0]
    check(b.get("roleRef", {}).get("name") == roles[0]["metadata"]["name"] and
          b.get("roleRef", {}).get("kind") == "ClusterRole", "the binding refers to that ClusterRole")
    check(b.get("subjects") == [{"kind": "ServiceAccount", "name": "gpuguard-webhook", "namespace": ns}],
          "the binding's only subject is the webhook's ServiceAccount")


def one(objs, kind, name=None):
    found = [o for o in objs if o.get("kind") == kind and (name is None or o["metadata"]["name"] == name)]
    check(len(found) == 1, f"exactly one {kind}{' ' + name if name else ''} (found {len(found)})")
    return found[0] if found else {}


def audit_values(args, exp):
    """What check_audit expects: the chart's values, or for a kustomize render with the
    background-audit component the chart's audit defaults (the component is that render)."""
    if args.chart_values:
        return exp.get("values")
    if not args.background_audit:
        return None
    return {"mode": args.mode, "audit": {"enabled": True, "reportFormat": "openreports"},
            "policy": yaml.safe_load(open(args.background_audit))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rendered")
    ap.add_argument("mode", nargs="?", choices=["enforce", "audit"])
    ap.add_argument("--cert-manager", action="store_true")
    ap.add_argument("--priority-class", action="store_true")
    ap.add_argument("--monitoring", action="store_true", help="the NetworkPolicy and monitoring components")
    ap.add_argument("--background-audit", metavar="POLICY",
                    help="the background-audit component; POLICY: the base policy it audits with")
    ap.add_argument("--chart-values", nargs="+", metavar="VALUES")
    args = ap.parse_args()
    objs = [o for o in yaml.safe_load_all(open(args.rendered)) if o]
    global APP
    if args.chart_values:
        exp = chart_expectations(args.chart_values)
        APP = dict(APP, **{"app.kubernetes.io/instance": "gpuguard"})
    else:
        exp = {"mode": args.mode, "replicas": 2, "cert_manager": args.cert_manager, "secret": SECRET,
               "priority_class": "system-cluster-critical" if args.priority_class else None,
               "mutate": args.mode == "enforce",  # manifests/base ships it; the audit component leaves it out
               "object_selector": False, "network_policy": args.monitoring, "monitoring": args.monitoring,
               "rule": args.monitoring, "dashboard": False, "cluster_facts": True,
               "audit": bool(args.background_audit)}
    args.mode = exp["mode"]
    args.cert_manager = exp["cert_manager"]

    # ---- namespaces -------------------------------------------------------------------
    if not args.chart_values:
        nsobj = one(objs, "Namespace", NS)
        labels = nsobj.get("metadata", {}).get("labels", {})
        check(labels.get("pod-security.kubernetes.io/enforce") == "restricted",
              "the namespace enforces the restricted Pod Security Standard")
    else:
        check(not [o for o in objs if o["kind"] == "Namespace"], "the chart creates no Namespace (helm -n, --create-namespace)")
    cluster_scoped = {"Namespace", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "PriorityClass",
                      "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}
    dashboard_ns = (exp.get("values", {}).get("grafanaDashboard", {}).get("namespace") or NS)
    stray = [f'{o["kind"]}/{o["metadata"]["name"]}' for o in objs
             if o["kind"] not in cluster_scoped and o["metadata"].get("namespace") != NS
             and not (o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")
                      and o["metadata"].get("namespace") == dashboard_ns)]
    check(not stray, f"every namespaced object is in {NS} (not: {stray})")

    # ---- ServiceAccount ---------------------------------------------------------------
    sa = one(objs, "ServiceAccount", "gpuguard-webhook")
    check(sa.get("automountServiceAccountToken") is False, "the ServiceAccount mounts no API token by default")
    rbac = [o for o in objs if o["kind"] in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")]
    facts_rbac = [o for o in rbac if "-audit" not in o["metadata"]["name"]]
    if exp["cluster_facts"]:
        check_cluster_facts_rbac(objs, facts_rbac, NS)
    else:
        check(not facts_rbac, "no cluster-facts RBAC while clusterFacts is off")
    if not exp["cluster_facts"] and not exp["audit"]:
        check(not rbac, "no RBAC: without cluster facts and audit the webhook never calls the API server")
    calls_api = exp["cluster_facts"] or exp["audit"]

    # ---- Deployment --------------------------------------------------------------------
    dep = one(objs, "Deployment", "gpuguard-webhook")
    spec = dep.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    tmpl_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    check(spec.get("replicas") == exp["replicas"], f"{exp['replicas']} replicas (got {spec.get('replicas')})")
    check(spec.get("selector", {}).get("matchLabels") == APP, "the Deployment selects the webhook pods")
    check(all(tmpl_labels.get(k) == v for k, v in APP.items()), "the pod template carries the selector labels")
    ru = spec.get("strategy", {}).get("rollingUpdate", {})
    check(ru.get("maxUnavailable") == 0, "rolling updates never drop below the replica count (maxUnavailable 0)")

    tsc = pod.get("topologySpreadConstraints", [])
    check(any(t["topologyKey"] == "kubernetes.io/hostname" and t["labelSelector"]["matchLabels"] == APP for t in tsc),
          "topologySpreadConstraints spread the replicas across nodes")
    check(all(t.get("whenUnsatisfiable") == "ScheduleAnyway" for t in tsc),
          "spread constraints are ScheduleAnyway (tainted GPU nodes must not keep a replica Pending)")
    anti = pod.get("affinity", {}).get("podAntiAffinity", {}).get("preferredDuringSchedulingIgnoredDuringExecution", [])
    check(any(a["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname" and
              a["podAffinityTerm"]["labelSelector"]["matchLabels"] == APP for a in anti),
          "podAntiAffinity prefers different nodes")

    psc = pod.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True, "pod runAsNonRoot")
    check(isinstance(psc.get("runAsUser"), int) and psc["runAsUser"] > 0, "pod runAsUser is a non-zero number")
    check(psc.get("runAsUser") == 65532 and psc.get("runAsGroup") == 65532,
          "pod runs as 65532:65532, the Dockerfile's USER")
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "pod seccompProfile RuntimeDefault")
    if calls_api:
        check(pod.get("automountServiceAccountToken") is True, "the pod mounts its API token (cluster facts, audit)")
    else:
        check(pod.get("automountServiceAccountToken") is False, "the pod mounts no API token (cluster facts and audit off)")
    check(pod.get("serviceAccountName") == "gpuguard-webhook", "the pod runs as ServiceAccount gpuguard-webhook")
    check(not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC"), "no host namespaces")
    if exp["priority_class"]:
        check(pod.get("priorityClassName") == exp["priority_class"], f"priorityClassName {exp['priority_class']}")
        if args.chart_values and exp["values"]["priorityClass"]["create"]:
            pc = one(objs, "PriorityClass", exp["priority_class"])
            check(pc.get("value") == exp["values"]["priorityClass"]["value"] and pc.get("globalDefault") is False,
                  "the PriorityClass has the asked value and is not the global default")
    else:
        check("priorityClassName" not in pod, "no priorityClassName unless the component asks for it")

    containers = pod.get("containers", [])
    check(len(containers) == 1, "one container")
    c = containers[0] if containers else {}
    csc = c.get("securityContext", {})
    check(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation false")
    check(csc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
    check(csc.get("capabilities", {}).get("drop") == ["ALL"] and not csc.get("capabilities", {}).get("add"),
          "all capabilities dropped, none added")
    check(csc.get("runAsNonRoot") is True and csc.get("runAsUser") == 65532, "container runAsNonRoot as 65532")
    check(csc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "container seccompProfile RuntimeDefault")
    check(not csc.get("privileged"), "not privileged")

    res = c.get("resources", {})
    for kind in ("requests", "limits"):
        for r in ("cpu", "memory"):
            check(r in res.get(kind, {}), f"resources.{kind}.{r} is set")

    ports = {p["name"]: p for p in c.get("ports", [])}
    check(ports.get("https", {}).get("containerPort") == 8443, "container port https = 8443")
    argv = c.get("args", [])
    check("--tls-cert-file=/etc/gpuguard/tls/tls.crt" in argv, "--tls-cert-file in the Secret volume")
    check("--tls-private-key-file=/etc/gpuguard/tls/tls.key" in argv, "--tls-private-key-file in the Secret volume")
    check("--policy=/etc/gpuguard/policy/policy.yaml" in argv, "--policy in the ConfigMap volume")
    facts_flag = "--cluster-facts=" + ("on" if exp["cluster_facts"] else "off")
    check(facts_flag in argv, f"{facts_flag} (clusterFacts.enabled)")
    check("--port=8443" in argv, "--port=8443")
    env = {e["name"]: e for e in c.get("env", [])}
    check("--memory-limit=$(GPUGUARD_MEMORY_LIMIT)" in argv and
          env.get("GPUGUARD_MEMORY_LIMIT", {}).get("valueFrom", {}).get("resourceFieldRef", {}).get("resource")
          == "limits.memory", "--memory-limit from the container's limits.memory (Downward API)")
    check(not c.get("command"), "no command: the image's ENTRYPOINT runs gpuguard-webhook")
    check(c.get("image", "").split("@")[0].split(":")[0].endswith("gpuguard-webhook"), f"image {c.get('image')}")

    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        g = c.get(probe, {}).get("httpGet", {})
        check(g.get("path") == path and g.get("scheme") == "HTTPS" and g.get("port") in ("https", 8443),
              f"{probe}: GET {path} over HTTPS on the webhook port")

    pre = c.get("lifecycle", {}).get("preStop", {})
    check(pre.get("exec", {}).get("command", [None])[0] == "sleep" or "sleep" in pre,
          "preStop waits while the Service stops routing to a terminating replica")
    grace = pod.get("terminationGracePeriodSeconds", 30)
    check(grace >= 15, f"terminationGracePeriodSeconds leaves time to drain (got {grace})")

    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for name, path in (("tls", "/etc/gpuguard/tls"), ("policy", "/etc/gpuguard/policy")):
        m = mounts.get(name, {})
        check(m.get("mountPath") == path and m.get("readOnly") is True, f"volume {name} mounted read-only at {path}")
        check("subPath" not in m and "subPathExpr" not in m,
              f"volume {name} is mounted as a directory, not subPath (subPath mounts never see updates)")
    check(vols.get("tls", {}).get("secret", {}).get("secretName") == exp["secret"], f"the tls volume is Secret {exp['secret']}")
    check("items" not in vols.get("tls", {}).get("secret", {}), "the tls volume projects the whole Secret")
    mode = vols.get("tls", {}).get("secret", {}).get("defaultMode")
    check(mode is None or (mode & 0o007) == 0, f"the private key is not world-readable (defaultMode {mode and oct(mode)})")
    if mode is not None and (mode & 0o044) == 0o040:
        check(psc.get("fsGroup") == psc.get("runAsGroup"), "group-readable key files: fsGroup is the process's group")
    check(vols.get("policy", {}).get("configMap", {}).get("name") == "gpuguard-policy",
          "the policy volume is ConfigMap gpuguard-policy")

    # ---- policy ConfigMap ---------------------------------------------------------------
    cm = one(objs, "ConfigMap", "gpuguard-policy")
    policy_text = cm.get("data", {}).get("policy.yaml")
    check(policy_text is not None, "the ConfigMap holds policy.yaml")
    policy = yaml.safe_load(policy_text or "") or {}
    rules = policy.get("rules") or {}
    if args.mode == "audit":
        check(rules and all(v in ("warning", "off") for v in rules.values()) and
              (not args.chart_values or rules.get("*") == "warning"),
              "audit: every rule is a warning (or off)" + (", \"*\" included" if args.chart_values else ""))
    elif args.chart_values:
        want = exp["values"]["policy"].get("rules") or {}
        check(rules == want, f"enforce: the rules are the values' rules (got {rules}, want {want})")
    else:
        check(all(v == "error" for v in rules.values()),
              f"enforce: no rule is relaxed to warning or off (got {rules})")
    if args.chart_values:
        rest = {k: v for k, v in policy.items() if k != "rules"}
        want = {k: v for k, v in exp["values"]["policy"].items() if k != "rules"}
        check(rest == want, "the policy outside rules is the values' policy")
    check(policy.get("allowSuppressions") is False,
          "the webhook ignores suppression annotations (anyone who can create a pod can write one)")
    check_audit(check, objs, rbac, c, cm, yaml, audit_values(args, exp), NS)

    # ---- Service and PDB ----------------------------------------------------------------
    svc = one(objs, "Service", "gpuguard-webhook")
    sp = svc.get("spec", {})
    check(sp.get("selector") == APP, "the Service selects the webhook pods")
    sports = sp.get("ports", [])
    check(len(sports) == 1 and sports[0]["port"] == 443 and sports[0]["targetPort"] in ("https", 8443),
          "the Service maps 443 to the webhook port")
    pdb = one(objs, "PodDisruptionBudget", "gpuguard-webhook")
    check(pdb.get("apiVersion") == "policy/v1", "PodDisruptionBudget is policy/v1")
    check(pdb.get("spec", {}).get("minAvailable") == 1, "PodDisruptionBudget minAvailable 1")
    check(pdb.get("spec", {}).get("selector", {}).get("matchLabels") == APP, "the PDB selects the webhook pods")

    # ---- ValidatingWebhookConfiguration ---------------------------------------------------
    vwc = one(objs, "ValidatingWebhookConfiguration", "gpuguard")
    hooks = vwc.get("webhooks", [])
    check(len(hooks) == 1, "one webhook")
    h = hooks[0] if hooks else {}
    check(h.get("name") == "validate.gpuguard.io", "webhook name validate.gpuguard.io")
    check(h.get("admissionReviewVersions") == ["v1"], "admissionReviewVersions [v1]")
    check(h.get("sideEffects") == "None", "sideEffects None")
    want_fp = "Ignore" if args.mode == "audit" else "Fail"
    check(h.get("failurePolicy") == want_fp, f"{args.mode}: failurePolicy {want_fp} (got {h.get('failurePolicy')})")
    check(isinstance(h.get("timeoutSeconds"), int) and 1 <= h["timeoutSeconds"] <= 10,
          f"a short timeoutSeconds (got {h.get('timeoutSeconds')})")
    check(h.get("matchPolicy") == "Equivalent", "matchPolicy Equivalent")
    cc = h.get("clientConfig", {})
    check("url" not in cc, "the webhook is called through its Service, not a URL")
    s = cc.get("service", {})
    check(s.get("name") == "gpuguard-webhook" and s.get("namespace") == NS and s.get("path") == "/validate"
          and s.get("port", 443) == 443, "clientConfig.service is gpuguard-webhook:443/validate in " + NS)
    if args.cert_manager:
        ann = vwc.get("metadata", {}).get("annotations", {})
        check(ann.get("cert-manager.io/inject-ca-from") == f"{NS}/{SECRET}",
              "cert-manager injects the CA of Certificate " + SECRET)
        check(not cc.get("caBundle"), "caBundle left to cert-manager's injector")

    sel = h.get("namespaceSelector", {})
    check(not sel.get("matchLabels"), "namespaceSelector uses expressions only")
    excluded = set()
    for e in sel.get("matchExpressions", []):
        if e["key"] == "kubernetes.io/metadata.name":
            check(e["operator"] == "NotIn", "namespaces are excluded by kubernetes.io/metadata.name NotIn")
            excluded |= set(e.get("values", []))
    check({"kube-system", NS} <= excluded, f"kube-system and {NS} are never sent to the webhook (excluded: {sorted(excluded)})")
    if args.cert_manager:
        check("cert-manager" in excluded, "cert-manager's namespace is excluded (it renews gpuguard's certificate)")
    if exp["object_selector"]:
        check(h.get("objectSelector") == exp["values"]["webhook"]["objectSelector"], "objectSelector from the values")
    else:
        check(not h.get("objectSelector"), "no objectSelector: every pod is judged")
    if args.chart_values:
        check(h.get("timeoutSeconds") == exp["values"]["webhook"]["timeoutSeconds"], "timeoutSeconds from the values")
        mc = exp["values"]["webhook"]["matchConditions"]
        check(h.get("matchConditions", []) == mc, "matchConditions from the values")
        check(set(exp["values"]["webhook"]["excludeNamespaces"]) <= excluded, "excludeNamespaces are excluded")
    if args.chart_values and not args.cert_manager:
        check(bool(cc.get("caBundle")), "the caBundle is set")

    # ---- MutatingWebhookConfiguration (/mutate): enforce mode and mutate.enabled only -------
    mwcs = [o for o in objs if o["kind"] == "MutatingWebhookConfiguration"]
    if exp["mutate"]:
        check(len(mwcs) == 1, "a MutatingWebhookConfiguration for /mutate")
        mh = (mwcs[0].get("webhooks") or [{}])[0] if mwcs else {}
        ms = mh.get("clientConfig", {}).get("service", {})
        check(ms.get("path") == "/mutate" and ms.get("name") == "gpuguard-webhook", "it calls gpuguard-webhook:443/mutate")
        check(mh.get("reinvocationPolicy") == "IfNeeded", "reinvocationPolicy IfNeeded")
        check(mh.get("sideEffects") == "None", "mutate: sideEffects None")
        check(mh.get("namespaceSelector") == h.get("namespaceSelector") and mh.get("rules") == h.get("rules"),
              "mutate judges the same namespaces and resources as validate")
        check(mh.get("clientConfig", {}).get("caBundle") == cc.get("caBundle"), "mutate trusts the same CA")
        if not args.chart_values:  # the chart's mutate.failurePolicy is a value of its own
            check(mh.get("failurePolicy") == h.get("failurePolicy"), "mutate fails as validate does")
            check(ms.get("namespace") == cc.get("service", {}).get("namespace"), "mutate calls the same Service")
        if args.cert_manager:
            inject = "cert-manager.io/inject-ca-from"
            check(mwcs[0]["metadata"].get("annotations", {}).get(inject) ==
                  vwc.get("metadata", {}).get("annotations", {}).get(inject), "cert-manager injects the same CA into mutate")
    else:
        check(not mwcs, "no MutatingWebhookConfiguration (mutate off, or audit mode)")

    # ---- NetworkPolicy -----------------------------------------------------------------------
    nps = [o for o in objs if o["kind"] == "NetworkPolicy"]
    if exp["network_policy"]:
        np_ = one(objs, "NetworkPolicy", "gpuguard-webhook").get("spec", {})
        check(np_.get("podSelector", {}).get("matchLabels") == APP, "the NetworkPolicy selects the webhook pods")
        egress = np_.get("egress")
        if calls_api:
            eports = sorted(p.get("port") for r in egress or [] for p in r.get("ports", []))
            check(sorted(np_.get("policyTypes", [])) == ["Egress", "Ingress"] and eports == [443, 6443] and
                  all(r.get("ports") for r in egress or []), "egress only to HTTPS ports 443 and 6443 (the API server)")
        else:
            check(sorted(np_.get("policyTypes", [])) == ["Egress", "Ingress"] and not egress,
                  "no egress at all (the webhook calls nothing)")
        ports = [p for r in np_.get("ingress", []) for p in r.get("ports", [])]
        check(ports and all(p.get("port") in ("https", 8443) for p in ports) and
              all(r.get("ports") for r in np_.get("ingress", [])), "ingress only to the webhook port")
        cidrs = (exp.get("values", {}).get("networkPolicy", {}) or {}).get("apiServerCIDRs") or []
        if cidrs:
            got = sorted(b["ipBlock"]["cidr"] for r in np_["ingress"] for b in r.get("from", []) if "ipBlock" in b)
            check(got == sorted(cidrs), f"the API server CIDRs {cidrs} may reach it")
            check(any(b.get("namespaceSelector") for r in np_["ingress"] for b in r.get("from", [])),
                  "the monitoring namespace may reach it (metrics)")
    else:
        check(not nps, "no NetworkPolicy unless asked for")

    # ---- ServiceMonitor, PrometheusRule, dashboard ---------------------------------------------
    sms = [o for o in objs if o["kind"] == "ServiceMonitor"]
    if exp["monitoring"]:
        sm = one(objs, "ServiceMonitor", "gpuguard-webhook").get("spec", {})
        ep = (sm.get("endpoints") or [{}])[0]
        check(ep.get("port") == "https" and ep.get("scheme") == "https" and ep.get("path") == "/metrics",
              "the ServiceMonitor scrapes https /metrics on the Service's https port")
        tls = ep.get("tlsConfig", {})
        check(tls.get("serverName") == f"gpuguard-webhook.{NS}.svc" and tls.get("ca", {}).get("secret", {}).get("key") == "ca.crt",
              "it verifies the serving certificate (CA from the Secret, the Service's DNS name)")
        sel_labels = sm.get("selector", {}).get("matchLabels", {})
        check(all(svc["metadata"].get("labels", {}).get(k) == v for k, v in sel_labels.items()) and sel_labels,
              "the ServiceMonitor selects the Service")
    else:
        check(not sms, "no ServiceMonitor unless asked for")
    prs = [o for o in objs if o["kind"] == "PrometheusRule"]
    if exp["rule"]:
        pr = one(objs, "PrometheusRule", "gpuguard-webhook").get("spec", {})
        alerts = {r.get("alert"): r for g in pr.get("groups", []) for r in g.get("rules", [])}
        for a, metric in (("GpuguardCertificateExpiresSoon", "gpuguard_serving_certificate_expiration_timestamp_seconds"),
                          ("GpuguardWebhookErrors", "gpuguard_admission_requests_total"),
                          ("GpuguardWebhookSlow", "gpuguard_admission_duration_seconds_bucket"),
                          ("GpuguardWebhookDown", "up")):
            check(metric in alerts.get(a, {}).get("expr", ""), f"alert {a} on {metric}")
        if exp["audit"]:
            for a, metric in (("GpuguardAuditStale", "gpuguard_audit_last_full_scan_timestamp_seconds"),
                              ("GpuguardAuditNoLeader", "gpuguard_audit_leader")):
                check(metric in alerts.get(a, {}).get("expr", ""), f"alert {a} on {metric}")
        else:
            check(not [a for a in alerts if a.startswith("GpuguardAudit")], "no audit alerts while the audit is off")
    else:
        check(not prs, "no PrometheusRule unless asked for")
    dash = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")]
    if exp["dashboard"]:
        import json
        check(len(dash) == 1 and dash[0]["metadata"].get("labels", {}).get("grafana_dashboard") == "1",
              "a dashboard ConfigMap with the Grafana sidecar label grafana_dashboard: \"1\"")
        board = json.loads(next(iter(dash[0].get("data", {}).values()), "{}")) if dash else {}
        check(board.get("panels") and board.get("uid") == "gpuguard-webhook", "the dashboard is a Grafana dashboard JSON")
    else:
        check(not dash, "no dashboard unless asked for")

    seen = {}
    for r in h.get("rules", []):
        check(sorted(r.get("operations", [])) == ["CREATE", "UPDATE"],
              f"rule {r.get('apiGroups')}: operations CREATE and UPDATE only (got {r.get('operations')})")
        want = "Cluster" if set(r.get("resources", [])) <= CLUSTER_SCOPED else "Namespaced"
        check(r.get("scope") == want, f"rule {r.get('apiGroups')} {r.get('resources')}: scope {want}")
        for res in r.get("resources", []):
            check("/" not in res and res != "*", f"rule resource {res}: no subresources, no wildcard")
        for g in r.get("apiGroups", []):
            seen.setdefault(g, set()).update(r.get("resources", []))
    check(seen == EXPECTED_RULES,
          "the rules cover exactly the expected resources"
          + ("" if seen == EXPECTED_RULES else f": missing {({g: sorted(v - seen.get(g, set())) for g, v in EXPECTED_RULES.items() if v - seen.get(g, set())})}, extra {({g: sorted(v - EXPECTED_RULES.get(g, set())) for g, v in seen.items() if v - EXPECTED_RULES.get(g, set())})}"))

    # ---- cert-manager objects ---------------------------------------------------------------
    if args.cert_manager:
        issuers = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Issuer"}
        certs = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Certificate"}
        check("selfSigned" in issuers.get("gpuguard-selfsigned", {}).get("spec", {}), "a selfSigned Issuer")
        ca = certs.get("gpuguard-ca", {}).get("spec", {})
        check(ca.get("isCA") is True and ca.get("issuerRef", {}).get("name") == "gpuguard-selfsigned",
              "the CA Certificate is issued by the selfSigned Issuer")
        check(issuers.get("gpuguard-ca", {}).get("spec", {}).get("ca", {}).get("secretName") == ca.get("secretName"),
              "the CA Issuer signs with the CA Certificate's Secret")
        leaf = certs.get(SECRET, {}).get("spec", {})
        check(leaf.get("secretName") == SECRET, f"the serving Certificate writes Secret {SECRET}, which the pods mount")
        check(leaf.get("issuerRef", {}).get("name") == "gpuguard-ca", "the serving Certificate is issued by the CA Issuer")
        check(set(leaf.get("dnsNames", [])) == {f"gpuguard-webhook.{NS}.svc", f"gpuguard-webhook.{NS}.svc.cluster.local"},
              "the serving Certificate names the Service")
        for name, spec_ in (("gpuguard-ca", ca), (SECRET, leaf)):
            pk = spec_.get("privateKey", {})
            check(pk.get("algorithm") == "ECDSA" and pk.get("size") == 256, f"{name}: ECDSA P-256 key")
        check("server auth" in leaf.get("usages", []), "the serving Certificate is for server auth")

    return 0


if __name__ == "__main__":
    sys.exit(main())
