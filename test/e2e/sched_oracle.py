#!/usr/bin/env python3
"""kube-scheduler as an oracle for gpuguard.

For every case of scheduler/cases.yaml, alone on the cluster:

  1. its Nodes (and, for DRA, ResourceSlices) are created through the API, no kubelet (as kwok
     does), then its other objects (DeviceClasses, ResourceClaims) and its Pod;
  2. kube-scheduler's verdict is read from the Pod: bound (spec.nodeName), or Pending with the
     PodScheduled=False message ("0/2 nodes are available: ..."), or rejected by the API server;
  3. it is compared with
     (a) gpuguard-lint on the pod and its objects: a finding that says the pod cannot schedule
         (stays Pending, matches no node) must meet a pod that does not schedule; and when the
         scheduler leaves the pod Pending, a rule the case names under `judge` must say so;
     (b) `gpuguard-lint --nodes nodes.json` where nodes.json is `kubectl get nodes,deviceclasses -o json` of
         the very same nodes: schedulable or not, on which nodes, and the verdict line (the
         scheduler's message up to " preemption:");
     (d) `gpuguard-lint --cluster --pending -A` on the live cluster: a pod the scheduler leaves
         Pending is listed with agreesWithScheduler (its verdict equals the PodScheduled message up
         to " preemption:"); a bound pod is not listed;
    (c) admission with the cluster's facts: `gpuguard-lint --facts nodes.json` (the same file, which
         also holds the namespaces): gpu-unschedulable or gpu-count-exceeds-node (or a
         gpu-missing-toleration error saying the pod cannot schedule) must fire exactly
         when the scheduler leaves the pod Pending (printed as "admission scheduler oracle: N of M
         cases agree"; M counts the GPU pods the scheduler decided on).

Differences explained in docs/e2e-oracle.md are listed in scheduler/known.tsv and count as
agreeing ("documented"); anything else is a failure.

Needs PyYAML. Talks to the API server directly over HTTPS with the admin client certificate
(stdlib http.client), and runs kubectl only where a user would (kubectl get nodes,deviceclasses -o json).
Prints one line per case, then "scheduler oracle: N of M cases agree" and SCHED_COUNTS P F.
"""
import argparse
import copy
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import time

import yaml

NS = "sched"
TIMEOUT = 60
# GPU Feature Discovery labels as GFD writes them (NVIDIA/k8s-device-plugin, gpu-feature-discovery).
GFD = {
    "t4": {"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.memory": "15360",
           "nvidia.com/gpu.family": "turing", "nvidia.com/gpu.count": "4",
           "nvidia.com/cuda.driver-version.major": "535", "nvidia.com/cuda.driver-version.minor": "183",
           "nvidia.com/cuda.driver-version.revision": "01", "nvidia.com/cuda.driver-version.full": "535.183.01",
           "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "2",
           "nvidia.com/cuda.runtime-version.full": "12.2", "nvidia.com/mig.capable": "false"},
    "a100": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920",
             "nvidia.com/gpu.family": "ampere", "nvidia.com/gpu.count": "8",
             "nvidia.com/cuda.driver-version.major": "550", "nvidia.com/cuda.driver-version.minor": "127",
             "nvidia.com/cuda.driver-version.revision": "05", "nvidia.com/cuda.driver-version.full": "550.127.05",
             "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "4",
             "nvidia.com/cuda.runtime-version.full": "12.4", "nvidia.com/mig.capable": "true",
             "nvidia.com/mig.strategy": "single"},
    "h100": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559",
             "nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.count": "8",
             "nvidia.com/cuda.driver-version.major": "570", "nvidia.com/cuda.driver-version.minor": "133",
             "nvidia.com/cuda.driver-version.revision": "20", "nvidia.com/cuda.driver-version.full": "570.133.20",
             "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "8",
             "nvidia.com/cuda.runtime-version.full": "12.8", "nvidia.com/mig.capable": "true",
             "nvidia.com/mig.strategy": "single"},
    "l4": {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.memory": "23034",
           "nvidia.com/gpu.family": "ada-lovelace", "nvidia.com/gpu.count": "1",
           "nvidia.com/cuda.driver-version.major": "550", "nvidia.com/cuda.driver-version.minor": "127",
           "nvidia.com/cuda.driver-version.revision": "05", "nvidia.com/cuda.driver-version.full": "550.127.05",
           "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "4",
           "nvidia.com/cuda.runtime-version.full": "12.4", "nvidia.com/mig.capable": "false"},
}
GFD["a100-mig"] = dict(GFD["a100"], **{"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product":
                                       "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"})
for _labels in GFD.values():
    _labels["nvidia.com/gpu.present"] = "true"

# A finding that says the pod will not be scheduled (as opposed to: rejected, or a warning).
PENDING_CLAIM = re.compile(r"Pending|cannot schedule|matches no node|never matches|no node (?:carries|offers|"
                           r"advertises|has)|Insufficient|no device plugin advertises|not a MIG profile the device "
                           r"plugin advertises")
# With the cluster's facts: the rules that say no node can take the pod.
ADMISSION_RULES = {"gpu-unschedulable", "gpu-count-exceeds-node"}
# With the cluster's facts: the rule that says the nodes' taints keep the pod off (an error that
# claims Pending must meet a pod the scheduler leaves Pending).
FACTS_TAINT_RULES = {"gpu-missing-toleration"}
# The rules whose findings can make such a claim (the rest never speak about scheduling).
SCHEDULING_RULES = {"gpu-missing-toleration", "gpu-count-exceeds-node", "gpu-label-value", "node-affinity-gt-lt",
                    "dra-with-device-plugin", "gpu-resource-name", "mig-resource-name"}


# ---------------------------------------------------------------------------------------------
# the API server
# ---------------------------------------------------------------------------------------------
class Api:
    def __init__(self, server, ca, cert, key):
        m = re.match(r"https://([^:/]+):(\d+)", server)
        self.host, self.port = m.group(1), int(m.group(2))
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)

    def call(self, method, path, body=None, content_type="application/json"):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        try:
            data = json.dumps(body) if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": content_type, "Accept": "application/json"})
            r = conn.getresponse()
            raw = r.read().decode("utf-8", "replace")
            try:
                return r.status, json.loads(raw) if raw else {}
            except ValueError:
                return r.status, {"message": raw}
        finally:
            conn.close()

    def items(self, path):
        st, body = self.call("GET", path)
        return body.get("items", []) if st == 200 else []


def path_of(obj, collection=True):
    """REST collection path of an object (the kinds the cases use)."""
    kind = obj["kind"]
    plural = {"Node": "nodes", "Pod": "pods", "DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices",
              "ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates"}[kind]
    av = obj["apiVersion"]
    base = "/api/v1" if av == "v1" else "/apis/" + av
    ns = "" if kind in ("Node", "DeviceClass", "ResourceSlice") else "/namespaces/" + NS
    p = base + ns + "/" + plural
    return p if collection else p + "/" + obj["metadata"]["name"]


def reset(api):
    """Remove what earlier cases left: pods, claims (their finalizers too), slices, classes, nodes.
    Pods go in every namespace: a Pending pod of an earlier test would take a case's GPUs."""
    for pod in api.items("/api/v1/pods"):
        api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"]),
                 {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    for claim in api.items("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % NS):
        p = "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s" % (NS, claim["metadata"]["name"])
        if claim["metadata"].get("finalizers"):
            api.call("PATCH", p, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        api.call("DELETE", p)
    for coll in ("/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/deviceclasses", "/api/v1/nodes"):
        api.call("DELETE", coll)
    deadline = time.time() + 30
    while time.time() < deadline:
        left = sum(len(api.items(p)) for p in (
            "/api/v1/pods", "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % NS,
            "/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/deviceclasses", "/api/v1/nodes"))
        if not left:
            return True
        time.sleep(0.2)
    return False


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------
def plain(obj):
    """A deep copy without shared references (YAML aliases), so dumps carry no anchors."""
    return json.loads(json.dumps(obj))


def parse_taint(t):
    if isinstance(t, dict):
        return t
    m = re.fullmatch(r"([^=:]+)(?:=([^:]*))?:(\w+)", t)
    if not m:
        raise ValueError("bad taint shorthand %r" % t)
    out = {"key": m.group(1), "effect": m.group(3)}
    if m.group(2):
        out["value"] = m.group(2)
    return out


def expand_node(prefix, spec):
    """(Node, [ResourceSlice]) from a node shorthand (see the head of cases.yaml)."""
    name = "%s-%s" % (prefix, spec["name"])
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    if spec.get("gfd"):
        labels.update(GFD[spec["gfd"]])
    labels.update(spec.get("labels") or {})
    capacity = {"cpu": "96", "memory": "1056Gi", "pods": "110", "ephemeral-storage": "1Ti"}
    if "gpu" in spec:
        capacity["nvidia.com/gpu"] = str(spec["gpu"])
    for k, v in (spec.get("resources") or {}).items():
        capacity[k] = str(v)
    allocatable = dict(capacity)
    for k, v in (spec.get("allocatable") or {}).items():
        allocatable[k] = str(v)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {}, "status": {"capacity": capacity, "allocatable": allocatable,
                                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                                   "message": "kubelet is posting ready status"}],
                                   "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                                                "kubeletVersion": "v1.37.2", "containerRuntimeVersion": "containerd://2.1.4"}}}
    taints = [parse_taint(t) for t in spec.get("taints") or []]
    if taints:
        node["spec"]["taints"] = taints
    if spec.get("unschedulable"):
        node["spec"]["unschedulable"] = True
    slices = []
    dev = spec.get("devices")
    if dev:
        devices = []
        for i in range(int(dev.get("count", 1))):
            d = {"name": "gpu-%d" % i}
            attrs = dict(dev.get("attributes") or {})
            attrs.setdefault("index", {"int": i})
            d["attributes"] = attrs
            if dev.get("capacity"):
                d["capacity"] = dev["capacity"]
            if dev.get("taints"):
                d["taints"] = dev["taints"]
            devices.append(d)
        slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": name + "-" + dev["driver"].replace(".", "-")},
                       "spec": {"driver": dev["driver"], "nodeName": name,
                                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                "devices": devices}})
    return plain(node), plain(slices)


class Case:
    def __init__(self, n, raw):
        self.n, self.raw = n, raw
        self.name = raw["name"]
        self.about = raw.get("about", "")
        self.prefix = "c%02d" % n
        self.judge = list(raw.get("judge") or [])
        self.policy = raw.get("policy")
        self.nodes, self.slices = [], []
        for spec in raw.get("nodes") or []:
            node, slices = expand_node(self.prefix, spec)
            self.nodes.append(node)
            self.slices += slices
        self.objects = [plain(o) for o in raw.get("objects") or []]
        self.pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": self.name, "namespace": NS},
                    "spec": plain(raw["pod"])}
        if self.pod["spec"].get("nodeName"):  # a node shorthand name, like the nodes' own
            self.pod["spec"]["nodeName"] = "%s-%s" % (self.prefix, self.pod["spec"]["nodeName"])
        self.verdict = None      # ("bound", node) | ("pending", message) | ("rejected", message) | ("error", why)
        self.findings = []       # gpuguard-lint findings on the pod and objects
        self.diag = None         # gpuguard-lint --nodes: the pod's diagnosis
        self.admission = []      # gpuguard-lint --facts findings (the cluster facts of the same nodes)
        self.results = {}        # side -> (status, detail)


def create_all(api, case):
    for obj in case.nodes + case.slices + case.objects:
        st, body = api.call("POST", path_of(obj), obj)
        if st >= 300:
            return "%s %s: HTTP %d %s" % (obj["kind"], obj["metadata"]["name"], st, body.get("message", ""))
        if obj["kind"] == "Node":
            # The TaintNodesByCondition admission plugin gives every new Node the taint
            # node.kubernetes.io/not-ready:NoSchedule; the node lifecycle controller (not run
            # here) removes it once the node is Ready, as the case's nodes are. Do what it does.
            taints = obj["spec"].get("taints") or []
            st, body = api.call("PATCH", path_of(obj, collection=False), {"spec": {"taints": taints or None}},
                                "application/merge-patch+json")
            if st >= 300:
                return "Node %s: taints: HTTP %d %s" % (obj["metadata"]["name"], st, body.get("message", ""))
    return None


def read_verdict(api, case, wait):
    st, body = api.call("POST", path_of(case.pod), case.pod)
    if st >= 300:
        return ("rejected", body.get("message", "HTTP %d" % st))
    p = path_of(case.pod, collection=False)
    deadline = time.time() + wait
    last = None
    while time.time() < deadline:
        st, pod = api.call("GET", p)
        if st == 200:
            if pod.get("spec", {}).get("nodeName"):
                return ("bound", pod["spec"]["nodeName"])
            for c in pod.get("status", {}).get("conditions") or []:
                if c.get("type") == "PodScheduled" and c.get("status") == "False":
                    last = c.get("message") or c.get("reason")
            if last is not None:
                # Pending; look once more shortly, in case a retry binds it (DRA allocation)
                time.sleep(1.0)
                st, pod = api.call("GET", p)
                if st == 200 and pod.get("spec", {}).get("nodeName"):
                    return ("bound", pod["spec"]["nodeName"])
                return ("pending", last)
        time.sleep(0.2)
    return ("error", "no scheduling decision within %d s" % wait)


def run(cmd, **kw):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, **kw)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timeout after %ds: %s" % (TIMEOUT, " ".join(cmd))


def lint_case(lint, work, case):
    """gpuguard-lint on the pod and objects, and with --nodes on the live nodes."""
    d = os.path.join(work, case.prefix)
    os.makedirs(d, exist_ok=True)
    manifest = os.path.join(d, "%s.yaml" % case.name)
    with open(manifest, "w") as f:
        yaml.safe_dump_all(case.objects + [case.pod], f, sort_keys=False)
    policy = os.path.join(d, ".gpuguard.yaml")
    with open(policy, "w") as f:
        if case.policy:
            yaml.safe_dump(case.policy, f, sort_keys=False)
        else:
            f.write("# the default policy\n")
    # the DeviceClasses beside the nodes say which extended resources DRA serves (KEP-5004)
    # the namespaces too: the cluster facts of --facts (their default tolerations); --nodes skips them
    rc, out, err = run(["kubectl", "--request-timeout=30s", "get", "nodes,deviceclasses,namespaces", "-o", "json"])
    nodes = os.path.join(d, "nodes.json")
    with open(nodes, "w") as f:
        f.write(out)
    case.lint_rc = None
    rc, out, err = run([lint, "--format", "json", "-c", policy, manifest])
    try:
        case.findings = [x for x in json.loads(out).get("findings", []) if not x.get("suppressed")]
    except ValueError:
        case.findings = None
        case.lint_error = "gpuguard-lint exit %d: %s" % (rc, (err or out)[:300])
    rc, out, err = run([lint, "--format", "json", "-c", policy, "--facts", nodes, manifest])
    try:
        case.admission = [x for x in json.loads(out).get("findings", []) if not x.get("suppressed")]
    except ValueError:
        case.admission = None
        case.admission_error = "gpuguard-lint --facts exit %d: %s" % (rc, (err or out)[:300])
    rc, out, err = run([lint, "--format", "json", "-c", policy, "--nodes", nodes, manifest])
    try:
        pods = json.loads(out).get("pods", [])
        case.diag = next((p for p in pods if p.get("kind") == "Pod"), None)
        case.diag_missing = "no GPU pod for --nodes to judge" if case.diag is None else None
    except ValueError:
        case.diag = None
        case.diag_missing = "gpuguard-lint --nodes exit %d: %s" % (rc, (err or out)[:300])
    # (d) the live mode, against the same cluster, as a user would run it (KUBECONFIG: the admin's)
    rc, out, err = run([lint, "--cluster", "--pending", "-A", "--format", "json", "-c", policy])
    case.live, case.live_error = None, None
    try:
        name = case.pod["metadata"]["name"]
        case.live = next((p for p in json.loads(out).get("pods", []) if p.get("name") == name), None)
    except ValueError:
        case.live_error = "gpuguard-lint --cluster --pending exit %d: %s" % (rc, (err or out)[:300])


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------
def scheduler_message(msg):
    """The part of the scheduler's message gpuguard reproduces (before the preemption summary)."""
    return re.split(r"\.? preemption: ", msg or "", maxsplit=1)[0].strip().rstrip(".")


# ...unless it says so of one term among others ("the pod can only land on a node that another
# term matches")
ONE_TERM_ONLY = re.compile(r"another term")


def claims(case):
    """gpuguard-lint findings that say the pod will not be scheduled."""
    return [f for f in case.findings or [] if f.get("rule") in SCHEDULING_RULES
            and PENDING_CLAIM.search(f.get("message", "")) and not ONE_TERM_ONLY.search(f.get("message", ""))]


def compare_rules(case):
    kind = case.verdict[0]
    if case.findings is None:
        return ("fail", case.lint_error)
    said = claims(case)
    names = sorted({f["rule"] for f in said})
    if said and kind == "bound":
        return ("disagree", "gpuguard says the pod cannot schedule (%s), the scheduler bound it to %s"
                % (", ".join(names), case.verdict[1]))
    if kind == "pending" and case.judge and not any(f["rule"] in case.judge for f in said):
        return ("disagree", "the scheduler leaves it Pending, and none of %s says so" % ", ".join(case.judge))
    if said:
        return ("agree", "%s: cannot schedule" % ", ".join(names))
    return ("agree", "no rule says it cannot schedule")


def compare_nodes(case):
    kind, what = case.verdict
    if case.diag is None:
        return ("n/a", case.diag_missing)
    fits = case.diag.get("schedulable")
    where = case.diag.get("schedulableNodes") or []
    verdict = case.diag.get("verdict", "")
    if fits and any("does not evaluate" in n for n in case.diag.get("notes") or []):
        # "the pod also uses DRA resourceClaims, which this diagnosis does not evaluate": a fit is
        # only a fit of the filters it knows, so it only claims something when it says Pending
        return ("n/a", "--nodes fits it on %s, leaving its resource claims to the scheduler" % ", ".join(where))
    if kind == "bound":
        if not fits:
            return ("disagree", "--nodes says %r, the scheduler bound it to %s" % (verdict, what))
        if where and what not in where:
            return ("disagree", "--nodes lists %s, the scheduler chose %s" % (", ".join(where), what))
        return ("agree", "schedulable on %s" % ", ".join(where))
    if kind == "pending":
        if fits:
            return ("disagree", "--nodes says schedulable on %s, the scheduler: %s" % (", ".join(where), what))
        ours = re.sub(r"^Pending: ", "", verdict).strip().rstrip(".")
        theirs = scheduler_message(what)
        if ours == theirs:
            return ("agree", "Pending, same message")
        return ("disagree", "same verdict, other words: --nodes %r, the scheduler %r" % (ours, theirs))
    return ("n/a", "the API server rejected the pod")


def compare_admission(case):
    """gpu-unschedulable / gpu-count-exceeds-node (and gpu-missing-toleration's errors) with the facts of the
    same nodes."""
    kind, what = case.verdict
    if case.admission is None:
        return ("fail", case.admission_error)
    gpu_pod = case.diag is not None or case.pod["spec"].get("resourceClaims")
    said = [f for f in case.admission if f.get("rule") in ADMISSION_RULES
            or (f.get("rule") in FACTS_TAINT_RULES and f.get("severity") == "error"
                and PENDING_CLAIM.search(f.get("message", "")))]
    if not gpu_pod and not said:
        return ("n/a", "not a GPU pod: the facts' rules do not judge it")
    if kind == "bound":
        if said:
            return ("disagree", "%s says it cannot schedule, the scheduler bound it to %s: %s"
                    % (said[0]["rule"], what, said[0]["message"][:200]))
        return ("agree", "schedulable (no finding)")
    if kind == "pending":
        if not said:
            return ("disagree", "no finding, the scheduler: %s" % scheduler_message(what))
        return ("agree", "%s: cannot schedule" % ", ".join(sorted({f["rule"] for f in said})))
    return ("n/a", "the API server rejected the pod")


def compare_live(case):
    """gpuguard-lint --cluster --pending -A: the pod's verdict beside the scheduler's own message."""
    kind, what = case.verdict
    if case.live_error:
        return ("fail", case.live_error)
    live = case.live
    if kind == "bound":
        if live is not None:
            return ("disagree", "--pending lists it as Pending, the scheduler bound it to %s" % what)
        return ("agree", "not listed (bound)")
    if kind == "pending":
        if live is None:
            if case.diag is None:
                return ("n/a", "not a GPU pod for --pending")
            return ("disagree", "--pending does not list the Pending pod")
        if live.get("schedulable") and any("does not evaluate" in n for n in live.get("notes") or []):
            return ("n/a", "--pending fits it, leaving its resource claims to the scheduler")
        if live.get("agreesWithScheduler") is True:
            return ("agree", "same message as PodScheduled")
        return ("disagree", live.get("agreement", "no agreement"))
    return ("n/a", "the API server rejected the pod")


def load_known(path):
    known = {}
    if path and os.path.exists(path):
        for line in open(path):
            if line.strip() and not line.startswith("#"):
                f = line.rstrip("\n").split("\t")
                if len(f) >= 3:
                    known[(f[0], f[1])] = f[2]
    return known


def judge(case, known):
    for side, fn in (("rules", compare_rules), ("nodes", compare_nodes), ("admission", compare_admission),
                     ("live", compare_live)):
        if case.verdict[0] == "error":
            case.results[side] = ("fail", case.verdict[1])
            continue
        st, detail = fn(case)
        if st in ("disagree", "fail") and (case.name, side) in known:
            st, detail = "documented", known[(case.name, side)] + " (" + detail + ")"
        elif side == "live" and st == "disagree" and case.results["nodes"][0] == "documented":
            # the same replay on the same nodes: --nodes' documented difference is --pending's too
            st, detail = "documented", "as --nodes: " + case.results["nodes"][1]
        case.results[side] = (st, detail)
    # a documented difference that no longer happens must be taken out of known.tsv
    for side in ("rules", "nodes", "admission", "live"):
        if (case.name, side) in known and case.results[side][0] not in ("documented",):
            case.results[side + "-known"] = ("stale", "scheduler/known.tsv lists a difference that did not happen")


def ok(case):
    return all(st in ("agree", "documented", "n/a") for st, _ in case.results.values())


def verdict_text(v):
    kind, what = v
    return {"bound": "bound to %s" % what, "pending": "Pending: %s" % scheduler_message(what),
            "rejected": "rejected: %s" % what, "error": "error: %s" % what}[kind]


def md(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def report(cases, versions, elapsed):
    n_ok = sum(ok(c) for c in cases)
    lines = ["Generated by `test/e2e/sched_oracle.py` (part of `test/e2e/run.sh`) on %s against %s, "
             "in %d s: **%d of %d cases agree**." % (time.strftime("%Y-%m-%d"), versions, elapsed, n_ok, len(cases)),
             "",
             "*rules*: what gpuguard-lint's findings say about scheduling; *--nodes*: `gpuguard-lint --nodes` on "
             "`kubectl get nodes,deviceclasses -o json` of the same nodes. *agree*, *documented* (an explained difference, "
             "below the table and in `test/e2e/scheduler/known.tsv`), *n/a* (not judged: no GPU pod for "
             "`--nodes`, or the API server rejected the pod).",
             "",
             "*admission*: `gpuguard-lint --facts` on the same file (the cluster facts): gpu-unschedulable or "
             "gpu-count-exceeds-node fire exactly when the scheduler leaves the pod Pending.",
             "",
             "*--pending*: `gpuguard-lint --cluster --pending -A` on the live cluster: the Pending pod listed "
             "with a verdict equal to its PodScheduled message (up to \" preemption:\"), a bound pod not listed.",
             "",
             "| # | case | kube-scheduler | rules | --nodes | admission | --pending |",
             "|---:|---|---|---|---|---|---|"]
    for c in cases:
        r, n = c.results.get("rules", ("-", "")), c.results.get("nodes", ("-", ""))
        a, v = c.results.get("admission", ("-", "")), c.results.get("live", ("-", ""))
        lines.append("| %d | `%s`: %s | %s | %s: %s | %s: %s | %s: %s | %s: %s |" % (
            c.n, c.name, md(c.about), md(verdict_text(c.verdict)), r[0], md(r[1]), n[0], md(n[1]), a[0], md(a[1]),
            v[0], md(v[1])))
    return "\n".join(lines) + "\n", n_ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", required=True)
    ap.add_argument("--lint", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--known")
    ap.add_argument("--versions", default="the test control plane")
    ap.add_argument("--report")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--wait", type=float, default=30.0, help="seconds to wait for a scheduling decision")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds between creating a case's objects and its pod (the scheduler's informers)")
    args = ap.parse_args()
    t0 = time.time()
    api = Api(args.server, args.ca, args.cert, args.key)
    raw = yaml.safe_load(open(args.cases))
    cases = [Case(i + 1, c) for i, c in enumerate(raw["cases"])]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        print("sched-oracle: duplicate case names", file=sys.stderr)
        return 2
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    known = load_known(args.known)
    work = tempfile.mkdtemp(prefix="gpuguard-sched-oracle.")
    for c in cases:
        if not reset(api):
            c.verdict = ("error", "could not clean up after the previous case")
        else:
            err = create_all(api, c)
            if err:
                c.verdict = ("error", "creating the case's objects: " + err)
            else:
                time.sleep(args.settle)
                c.verdict = read_verdict(api, c, args.wait)
        lint_case(args.lint, work, c)
        judge(c, known)
        good = ok(c)
        print("%s - sched %s %s: %s" % ("ok" if good else "FAIL", c.prefix, c.name, verdict_text(c.verdict)))
        for side, (st, detail) in sorted(c.results.items()):
            if not good or st == "documented":
                print("    %s: %s: %s" % (side, st, detail))
        if not good:
            for f in c.findings or []:
                print("    gpuguard-lint: %s: %s [%s]" % (f.get("field"), f.get("message"), f.get("rule")))
        sys.stdout.flush()
    reset(api)
    text, n_ok = report(cases, args.versions, time.time() - t0)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    subprocess.run(["rm", "-rf", work])
    judged = [c for c in cases if c.results.get("admission", ("n/a",))[0] != "n/a"]
    a_ok = sum(c.results["admission"][0] in ("agree", "documented") for c in judged)
    print("admission scheduler oracle: %d of %d cases agree" % (a_ok, len(judged)))
    live = [c for c in cases if c.results.get("live", ("n/a",))[0] != "n/a"]
    l_ok = sum(c.results["live"][0] in ("agree", "documented") for c in live)
    print("--pending scheduler oracle: %d of %d cases agree" % (l_ok, len(live)))
    print("scheduler oracle: %d of %d cases agree" % (n_ok, len(cases)))
    print("SCHED_COUNTS %d %d" % (n_ok, len(cases) - n_ok))
    return 0 if n_ok == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
