#!/usr/bin/env python3
"""The API server as an oracle for gpuguard-lint.

For every document of a built-in workload kind (Pod, Deployment, Job, CronJob, DaemonSet,
ReplicaSet, StatefulSet, ReplicationController, PodTemplate) in the given files, compare

  * `kubectl apply --dry-run=server --validate=false` against a real kube-apiserver with no
    gpuguard webhook registered, and
  * `gpuguard-lint --format json` on the very same bytes,

on the rules the API server itself enforces:

  gpu-fractional                 "must be an integer" on an extended resource
  gpu-requests-limits-mismatch   "must be equal to <resource> limit"
  gpu-requests-without-limits    "Limit must be set for non overcommitable resources"
                                 (only when an extended resource is the one without a limit)
  gpu-invalid-quantity           "must be greater than or equal to 0" on an extended resource,
                                 or a quantity that fails to decode (HTTP 400)
  label-value-not-string         a decode error (HTTP 400) because a string was expected

Findings are compared per container ("spec.template.spec.containers[0]"), decode errors per
document. A disagreement is either explained by a documented, deliberate difference (see
EXPLANATIONS below and oracle-known.tsv) or reported as a possible gpuguard bug.

Stdlib only (PyYAML is used when present, to find namespaces and navigate documents).
Needs KUBECONFIG pointing at the test cluster. See test/e2e/oracle.sh.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

try:
    import yaml  # PyYAML: YAML 1.1 like kubectl's sigs.k8s.io/yaml
except ImportError:  # pragma: no cover
    yaml = None

BUILTIN = {
    ("v1", "Pod"), ("v1", "ReplicationController"), ("v1", "PodTemplate"),
    ("apps/v1", "Deployment"), ("apps/v1", "DaemonSet"), ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"), ("batch/v1", "Job"), ("batch/v1", "CronJob"),
    ("batch/v1beta1", "CronJob"),
    # DRA (resource.k8s.io/v1, GA in 1.34): the objects gpuguard checks besides pods
    ("resource.k8s.io/v1", "ResourceClaim"), ("resource.k8s.io/v1", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1", "DeviceClass"),
}
BUILTIN_KINDS = {k for _, k in BUILTIN}
# apiVersions of built-in kinds that current API servers no longer serve (batch/v1beta1
# CronJob went in 1.25; the DRA betas are off by default)
UNSERVED = {"extensions/v1beta1", "apps/v1beta1", "apps/v1beta2", "batch/v2alpha1", "batch/v1beta1",
            "resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"}

RULES = ["gpu-fractional", "gpu-requests-limits-mismatch", "gpu-requests-without-limits",
         "gpu-invalid-quantity", "label-value-not-string"]
PARSE = "(unparseable YAML)"
# gpuguard's findings that quote the API server's own validation of DRA objects and pod-level
# resources: each must be the API server's cause on the same field, word for word (gpuguard may
# add advice after "; ")
QUOTE = "(quoted API messages)"
QUOTE_RULES = {"gpu-in-pod-level-resources", "dra-with-device-plugin", "gpu-resize-policy"}
# findings of those rules that say what happens *instead of* a rejection
NOT_A_REJECTION = re.compile(r"the API server defaults|stays Pending")
CRASH = "(gpuguard-lint crashed)"   # kubectl cannot parse the document vs gpuguard-lint reports an input error
CONTAINER_RE = re.compile(r"^(.*?(?:containers|initContainers|ephemeralContainers)\[\d+\])")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
CAUSE_RE = re.compile(r"^(\S+): (Invalid value|Required value|Unsupported value|Forbidden|Duplicate value|"
                      r"Not found|Too long|Too many|Internal error)(?:: )?(.*)$", re.S)

TIMEOUT = 60


def is_extended(name):
    # k8s IsExtendedResourceName, minus the qualified-name check (good enough to classify)
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def parse_quantity(v):
    """Exact value of a Kubernetes quantity (subset of the grammar: enough to classify)."""
    s = str(v).strip()
    m = re.fullmatch(r"([+-]?)([0-9]*\.?[0-9]*)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?", s)
    if not m or m.group(2) in ("", "."):
        return None
    num = Fraction(m.group(2) if not m.group(2).endswith(".") else m.group(2)[:-1] or "0")
    suf = m.group(3) or ""
    dec = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1, "k": 10**3,
           "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
    binary = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
    if suf in dec:
        mult = dec[suf]
    elif suf in binary:
        mult = binary[suf]
    else:
        mult = Fraction(10) ** int(suf[1:])
    val = num * mult
    return -val if m.group(1) == "-" else val


def round_up_milli(q):
    """What the API server's defaulting (RoundUp(-3)) makes of a quantity."""
    milli = q * 1000
    n = milli.numerator // milli.denominator
    if n != milli:
        n += 1 if q > 0 else 0
    return Fraction(n, 1000)


# ---------------------------------------------------------------------------------------
# documents
# ---------------------------------------------------------------------------------------
SEP_RE = re.compile(r"^---(\s.*)?$")


def split_documents(text):
    """[(first_line_1_based, doc_text)] keeping the original bytes of each document."""
    docs, cur, start = [], [], 1
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        if SEP_RE.match(line.rstrip("\r\n")):
            docs.append((start, "".join(cur)))
            cur, start = [], i + 1
            rest = line.rstrip("\r\n")[3:].strip()
            if rest and not rest.startswith("#"):   # "--- !tag" or "--- {..}": keep the content
                cur.append(rest + "\n")
                start = i
        elif line.rstrip("\r\n") == "...":
            continue
        else:
            cur.append(line)
    docs.append((start, "".join(cur)))
    return [(s, d) for s, d in docs if re.search(r"^[^#\s]", d, re.M)]


def top_level(doc, key):
    m = re.search(r"^%s:[ \t]*[\"']?([^\"'\s#]+)" % key, doc, re.M)
    return m.group(1) if m else None


class Doc:
    def __init__(self, path, rel, index, line, text):
        self.path, self.rel, self.index, self.line, self.text = path, rel, index, line, text
        self.api_version = top_level(text, "apiVersion")
        self.kind = top_level(text, "kind")
        self.obj = None
        if yaml is not None:
            try:
                self.obj = yaml.safe_load(text)
            except Exception:
                self.obj = None
        self.name = None
        self.namespace = None
        if isinstance(self.obj, dict) and isinstance(self.obj.get("metadata"), dict):
            md = self.obj["metadata"]
            self.name = md.get("name") if isinstance(md.get("name"), str) else None
            self.generate_name = md.get("generateName")
            self.namespace = md.get("namespace") if md.get("namespace") is not None else None
        else:
            self.generate_name = None
            m = re.search(r"^metadata:\s*\n(?:[ \t]+.*\n)*?[ \t]+name:[ \t]*[\"']?([^\"'\s#]+)", text, re.M)
            self.name = m.group(1) if m else None
            m = re.search(r"^metadata:\s*\n(?:[ \t]+.*\n)*?[ \t]+namespace:[ \t]*[\"']?([^\"'\s#]+)", text, re.M)
            self.namespace = m.group(1) if m else None
        self.sent = text          # what both tools get
        self.changes = []         # what we changed, for the report
        self.skip = None          # reason the document is not compared
        self.server = None        # ServerVerdict
        self.lint = {}            # rule -> set(locations)
        self.lint_raw = []        # linter findings (all rules) for the report
        self.lint_errors = []
        self.results = {}         # rule -> (status, detail)

    @property
    def ident(self):
        return "%s#%d" % (self.rel, self.index)

    def label(self):
        return "%s/%s" % (self.kind, self.name or self.generate_name or "?")


def prepare(doc):
    """Decide whether a document is compared, and adapt what the API server cannot take as it is."""
    if doc.kind not in BUILTIN_KINDS:
        return False
    if "{{" in doc.text:
        doc.skip = "Helm/Go template, not a manifest"
        return True
    av = doc.api_version
    if av in UNSERVED:
        doc.skip = "apiVersion %s is not served by the API server (removed or off by default)" % av
        return True
    if (av, doc.kind) not in BUILTIN:
        return False  # e.g. batch.volcano.sh/v1alpha1 Job: a custom resource
    ns = doc.namespace
    if ns is not None and not (isinstance(ns, str) and DNS_LABEL.match(ns) and len(ns) <= 63):
        new = re.sub(r"^([ \t]+)namespace:[ \t]*[\"']?%s[\"']?[ \t]*(#.*)?\n" % re.escape(str(ns)), "",
                     doc.sent, count=1, flags=re.M)
        if new != doc.sent:
            doc.sent = new
            doc.changes.append("metadata.namespace %r removed (not a valid namespace name)" % ns)
            doc.namespace = None
    return True


# ---------------------------------------------------------------------------------------
# API server side
# ---------------------------------------------------------------------------------------
class ServerVerdict:
    def _cause(self, p):
        p = p.strip()
        if p.startswith("* "):
            p = p[2:]
        if not p:
            return
        m = CAUSE_RE.match(p)
        self.causes.append((m.group(1), m.group(2), m.group(3)) if m else ("", "", p))

    def __init__(self, rc, out):
        self.rc, self.out = rc, out.strip()
        self.status = "accepted"      # accepted | invalid | decode | client-error | other
        self.causes = []              # [(field, reason, message)]
        self.decode_kind = None       # string | quantity | other
        if rc == 0:
            return
        if " is invalid:" in out:
            self.status = "invalid"
            body = out.split(" is invalid:", 1)[1]
            if body.lstrip(" ").startswith("\n"):
                # several causes: one "* field: reason: detail" line each
                for p in re.split(r"\n\* ", body):
                    self._cause(p)
            else:
                self._cause(body)
        elif "(BadRequest)" in out and ("cannot be handled as" in out or "unmarshal" in out):
            self.status = "decode"
            if "quantities must match" in out or "unable to parse quantity" in out:
                self.decode_kind = "quantity"  # refined by server_findings (which resource?)
            elif re.search(r"ReadString: expects \" or n|cannot unmarshal (number|bool)[^\n]* of type string", out):
                # only label-like maps are label-value-not-string's business (not annotations,
                # toleration values, env values...): the decoder names the Go field it was in
                # json-iterator (1.20): "NodeSelector: ReadString: expects \" or n"; encoding/json
                # (current): "cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string"
                m = re.search(r"(\w+): (?:\[\]string: )?ReadString: expects", out) or \
                    re.search(r"Go struct field \S*?(\w+) of type (?:string|\[\]string)", out)
                fieldname = m.group(1) if m else ""
                self.decode_kind = "string" if fieldname.lower() in ("nodeselector", "labels", "matchlabels", "values") \
                    else "string-other(%s)" % fieldname
            else:
                self.decode_kind = "other"
        elif out.startswith("error: error parsing") or "error converting YAML to JSON" in out:
            self.status = "client-error"
        elif "error: unable to decode" in out and "cannot unmarshal" in out:
            # kubectl decodes metadata itself before sending: a non-string label stops it there.
            # The user sees a rejection, not from the API server but from its client library.
            self.status = "decode"
            m = re.search(r"cannot unmarshal (\w+) into Go struct field (\S+) of type (\w+)", out)
            if m and m.group(3) == "string" and m.group(2).endswith(".labels"):
                self.decode_kind = "string"
            else:
                self.decode_kind = "other"
        else:
            self.status = "other"


def nav(obj, field):
    """Follow an API field path (spec.containers[0].resources) in a decoded document."""
    cur = obj
    for name, idx in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field):
        if name:
            if not isinstance(cur, dict) or name not in cur:
                return None
            cur = cur[name]
        else:
            if not isinstance(cur, list) or int(idx) >= len(cur):
                return None
            cur = cur[int(idx)]
    return cur


def bad_extended_quantity(obj, depth=0):
    """True if some container resource of an extended resource does not parse as a quantity."""
    if depth > 40:
        return False
    if isinstance(obj, list):
        return any(bad_extended_quantity(x, depth + 1) for x in obj)
    if not isinstance(obj, dict):
        return False
    res = obj.get("resources")
    if isinstance(res, dict):
        for lst in ("limits", "requests"):
            for k, v in (res.get(lst) or {}).items() if isinstance(res.get(lst), dict) else []:
                if is_extended(str(k)) and (isinstance(v, bool) or v is None or parse_quantity(v) is None):
                    return True
    return any(bad_extended_quantity(v, depth + 1) for k, v in obj.items() if k != "metadata")


def server_findings(doc):
    """rule -> set(container locations) from the API server's answer, or None if not judged."""
    v = doc.server
    res = {r: set() for r in RULES}
    unclassified = []
    if v.status == "accepted":
        return res, unclassified
    if v.status == "decode":
        if v.decode_kind == "string":
            res["label-value-not-string"].add("(decode)")
        elif v.decode_kind == "quantity":
            if bad_extended_quantity(doc.obj) or doc.obj is None:
                res["gpu-invalid-quantity"].add("(decode)")
            else:
                unclassified.append("not an extended resource: " + first_line(v.out))
        else:
            unclassified.append(first_line(v.out))
        return res, unclassified
    if v.status != "invalid":
        return None, [v.out]
    for field, reason, msg in v.causes:
        m = CONTAINER_RE.match(field)
        loc = m.group(1) if m else field
        key = re.search(r"\.resources\.(?:limits|requests)\[([^\]]+)\]$", field)
        if key and "must be an integer" in msg and is_extended(key.group(1)):
            res["gpu-fractional"].add(loc)
        elif key and "must be greater than or equal to 0" in msg and is_extended(key.group(1)):
            res["gpu-invalid-quantity"].add(loc)
        elif field.endswith(".resources.requests") and re.search(r"must be equal to (\S+) limit", msg) and \
                is_extended(re.search(r"must be equal to (\S+) limit", msg).group(1)):
            res["gpu-requests-limits-mismatch"].add(loc)
        elif field.endswith(".resources.limits") and "Limit must be set for non overcommitable" in msg:
            resources = nav(doc.obj, field[: -len(".limits")]) if doc.obj is not None else None
            if isinstance(resources, dict):
                reqs = resources.get("requests") or {}
                lims = resources.get("limits") or {}
                if any(is_extended(str(k)) and k not in lims for k in reqs):
                    res["gpu-requests-without-limits"].add(loc)
                else:
                    unclassified.append("%s: %s: %s" % (field, reason, msg))
            else:
                res["gpu-requests-without-limits"].add(loc)
        else:
            unclassified.append("%s: %s: %s" % (field, reason, msg))
    return res, unclassified


# ---------------------------------------------------------------------------------------
# comparison and explanations
# ---------------------------------------------------------------------------------------
def container_values(doc, loc, rule):
    """GPU-ish quantities of the container at loc: [(list, name, raw)]"""
    c = nav(doc.obj, loc) if doc.obj is not None and loc.startswith(("spec", "template")) else None
    out = []
    if isinstance(c, dict) and isinstance(c.get("resources"), dict):
        for lst in ("limits", "requests"):
            for k, v in (c["resources"].get(lst) or {}).items():
                if is_extended(str(k)):
                    out.append((lst, str(k), v))
    return out


def explain(doc, rule, server_locs, lint_locs):
    """A documented reason for a disagreement, or None."""
    only_lint = lint_locs - server_locs
    only_server = server_locs - lint_locs
    if doc.kind == "StatefulSet" and only_lint and not only_server:
        return ("statefulset", "StatefulSet pod templates are not validated by the API server "
                "(ValidatePodTemplateSpecForStatefulSet); gpuguard checks them")
    if only_lint and not only_server and rule in ("gpu-fractional", "gpu-requests-limits-mismatch"):
        ok = True
        for loc in only_lint:
            vals = container_values(doc, loc, rule)
            if not vals:
                ok = False
                break
            for lst, name, raw in vals:
                q = parse_quantity(raw)
                if q is None:
                    ok = False
                    continue
                if rule == "gpu-fractional" and q.denominator != 1 and round_up_milli(q).denominator != 1:
                    ok = False  # a real fraction the server should have caught
            if rule == "gpu-requests-limits-mismatch":
                r = {n: parse_quantity(v) for l, n, v in vals if l == "requests"}
                lim = {n: parse_quantity(v) for l, n, v in vals if l == "limits"}
                for n in r:
                    if n in lim and None not in (r[n], lim[n]) and \
                            round_up_milli(r[n]) != round_up_milli(lim[n]):
                        ok = False
        if ok:
            return ("milli-roundup", "the API server rounds quantities up to milli precision before "
                    "validating (0.9999 -> 1); gpuguard flags the written value")
    return None


def compare(doc, known):
    if getattr(doc, "lint_crash", None):
        doc.unclassified = []
        doc.results[CRASH] = ("lint-crashed", doc.lint_crash)
        return
    doc.results[CRASH] = ("agree-clean", "")
    if doc.server.status == "client-error":
        # kubectl could not even parse the document: gpuguard-lint must say so too
        doc.unclassified = []
        if doc.lint_errors:
            doc.results[PARSE] = ("agree-flag", "")
        else:
            doc.results[PARSE] = ("server-only",
                                  "kubectl: %s; gpuguard-lint: no input error" % first_line(doc.server.out))
        for rule in RULES:
            if doc.lint.get(rule):
                doc.results[rule] = ("not-judged", "kubectl could not parse the document")
        return
    srv, unclassified = server_findings(doc)
    doc.unclassified = unclassified
    if srv is None:
        doc.skip = "API server did not judge the object: " + first_line(doc.server.out)
        return
    if doc.lint_errors:
        doc.results[PARSE] = ("lint-only", "kubectl parsed the document; gpuguard-lint: %s" % doc.lint_errors[0])
    else:
        doc.results[PARSE] = ("agree-clean", "")
    decode = doc.server.status == "decode"
    compare_quotes(doc)
    k = known.get((doc.rel, doc.index, QUOTE))
    if k and doc.results[QUOTE][0] not in ("agree-clean", "agree-flag"):
        doc.results[QUOTE] = ("documented", k)
    for rule in RULES:
        s = srv[rule]
        lint = doc.lint.get(rule, set())
        if rule == "label-value-not-string" or (decode and rule == "gpu-invalid-quantity"):
            # a decode error carries no field path: compare per document
            lint = {"(decode)"} if lint else set()
        elif decode:
            doc.results[rule] = ("not-judged", "a decode error stops the API server before validation")
            continue
        if decode and lint and not s:
            # decoding stops at the first error: a second kind of decode error is never reported
            doc.results[rule] = ("not-judged", "the API server stopped at another decode error")
            continue
        if s == lint:
            doc.results[rule] = ("agree-flag" if s else "agree-clean", "")
            continue
        k = known.get((doc.rel, doc.index, rule))
        if k:
            doc.results[rule] = ("documented", k)
            continue
        e = explain(doc, rule, s, lint)
        if e:
            doc.results[rule] = ("documented", e[1])
            continue
        if s and lint:
            status = "location-differs"
        elif s:
            status = "server-only"
        else:
            status = "lint-only"
        doc.results[rule] = (status, "API server: %s; gpuguard-lint: %s" % (sorted(s) or "-", sorted(lint) or "-"))


def compare_quotes(doc):
    """Each QUOTE_RULES finding that reads as a rejection must be the API server's own cause."""
    quotes = [f for f in doc.lint_raw if f.get("rule") in QUOTE_RULES and not f.get("suppressed")
              and CAUSE_RE.match("x: " + f.get("message", "")) and not NOT_A_REJECTION.search(f.get("message", ""))]
    if not quotes:
        doc.results[QUOTE] = ("agree-clean", "")
        return
    if doc.server.status != "invalid":
        doc.results[QUOTE] = ("lint-only", "gpuguard quotes %s, the API server: %s" % (
            "; ".join("%s: %s" % (f["field"], f["message"][:120]) for f in quotes),
            doc.server.status if doc.server.status != "decode" else first_line(doc.server.out)))
        return
    bad = []
    for f in quotes:
        reason, detail = CAUSE_RE.match("x: " + f["message"]).group(2, 3)
        same_field = [(r, m) for fld, r, m in doc.server.causes if fld == f["field"]]
        if not same_field:
            bad.append("%s: the API server reports nothing there (%s)" % (f["field"], f["message"][:120]))
        elif not any(r == reason and (not m.strip() or detail == m or detail.startswith(m.rstrip() + ";") or
                                      detail.startswith(m.rstrip() + " (")) for r, m in same_field):
            bad.append("%s: gpuguard %r, the API server %r" % (
                f["field"], "%s: %s" % (reason, detail.split(";")[0]), "; ".join("%s: %s" % rm for rm in same_field)))
    doc.results[QUOTE] = ("quote-differs", " / ".join(bad)) if bad else ("agree-flag", "")


def first_line(s):
    s = s.strip().splitlines()
    return s[0][:200] if s else ""


# ---------------------------------------------------------------------------------------
# running things
# ---------------------------------------------------------------------------------------
def run(cmd, **kw):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=TIMEOUT, **kw)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return 124, "timeout after %ds: %s" % (TIMEOUT, " ".join(cmd))


def kubectl(*args):
    rc, out = run(["kubectl", "--request-timeout=30s"] + list(args))
    out = "\n".join(l for l in out.splitlines() if not l.startswith("WARNING: version difference"))
    return rc, out


def pod_service_account(doc):
    """(namespace, name) of the ServiceAccount a Pod names, if it is a valid name."""
    if doc.kind != "Pod" or not isinstance(doc.obj, dict):
        return None
    spec = doc.obj.get("spec") or {}
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount") if isinstance(spec, dict) else None
    if isinstance(sa, str) and re.match(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", sa) and sa != "default":
        return (doc.namespace or "default", sa)
    return None


def ensure_service_accounts(pairs):
    # No controller creates them here; the ServiceAccount admission plugin rejects Pods
    # naming a missing one before validation runs, so a real cluster would have them.
    for ns, sa in sorted(pairs):
        if kubectl("-n", ns, "get", "serviceaccount", sa)[0] != 0:
            kubectl("-n", ns, "create", "serviceaccount", sa)


def ensure_namespaces(names, ca_file):
    for ns in sorted(names):
        if kubectl("get", "namespace", ns)[0] != 0:
            kubectl("create", "namespace", ns)
        if kubectl("-n", ns, "get", "serviceaccount", "default")[0] != 0:
            kubectl("-n", ns, "create", "serviceaccount", "default")
        if ca_file and kubectl("-n", ns, "get", "configmap", "kube-root-ca.crt")[0] != 0:
            kubectl("-n", ns, "create", "configmap", "kube-root-ca.crt", "--from-file=ca.crt=" + ca_file)


def server_check(doc):
    verb = "apply" if doc.name else "create"
    rc, out = kubectl(verb, "--dry-run=server", "--validate=false", "-f", doc.tmpfile)
    doc.server = ServerVerdict(rc, out)


def lint_json(lint_bin, files, workdir):
    rc, out = run([lint_bin, "--format", "json"] + files, cwd=workdir)
    try:
        return rc, out, json.loads(out[out.index("{"):])
    except Exception:
        return rc, out, None


def lint_all(lint_bin, docs, workdir):
    files = [d.tmpfile for d in docs]
    by_file = {d.tmpfile: d for d in docs}
    rc, out, data = lint_json(lint_bin, files, workdir)
    if data is None:
        # one bad document must not hide the verdicts on all the others: lint one by one
        print("oracle: gpuguard-lint failed on the whole batch (exit %d); linting each document alone" % rc,
              file=sys.stderr)
        data = {"findings": [], "errors": []}
        for d in docs:
            rc1, out1, data1 = lint_json(lint_bin, [d.tmpfile], workdir)
            if data1 is None:
                d.lint_crash = "gpuguard-lint exit %d%s: %s" % (
                    rc1, " (killed by signal %d)" % -rc1 if rc1 < 0 else "", first_line(out1) or "no output")
                continue
            data["findings"] += data1.get("findings", [])
            data["errors"] += data1.get("errors", [])
    for f in data.get("findings", []):
        d = by_file.get(f.get("file")) or by_file.get(os.path.join(workdir, f.get("file", "")))
        if d is None:
            continue
        d.lint_raw.append(f)
        if f.get("suppressed"):
            continue
        rule = f.get("rule")
        if rule in RULES:
            m = CONTAINER_RE.match(f.get("field", ""))
            d.lint.setdefault(rule, set()).add(m.group(1) if m else f.get("field", ""))
    for e in data.get("errors", []):
        d = by_file.get(e.get("file")) or by_file.get(os.path.join(workdir, e.get("file", "")))
        if d is not None:
            d.lint_errors.append(e.get("message", str(e)))
    return rc


def load_known(path):
    known = {}
    if path and os.path.exists(path):
        for line in open(path):
            if not line.strip() or line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4:
                known[(f[0], int(f[1]), f[2])] = f[3]
    return known


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------
def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def report(docs, all_docs, files, args, elapsed):
    judged = [d for d in docs if not d.skip]
    lines = []
    w = lines.append
    w("Generated by `test/e2e/oracle.sh` on %s against %s (`kubectl apply "
      "--dry-run=server --validate=false`, no webhook registered) and `gpuguard-lint --format json`, "
      "in %d s." % (time.strftime("%Y-%m-%d"), args.versions, elapsed))
    w("")
    w("Inputs: %d files (%s); %d documents of built-in workload kinds, %d compared, %d skipped." %
      (len(files), ", ".join(args.label), len(docs), len(judged), len(docs) - len(judged)))
    w("")
    w("### Agreement per rule")
    w("")
    w("Counted per document. *both flag*: the API server and gpuguard-lint flag the same containers; "
      "*documented*: a deliberate difference (listed below); *disagree*: anything else (a gpuguard "
      "bug or an undocumented difference).")
    w("")
    w("| rule | compared | both clean | both flag | documented difference | disagree | raw agreement | agreement with documented differences |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for rule in RULES + [PARSE, QUOTE, CRASH]:
        rs = [d.results[rule][0] for d in judged if rule in d.results and d.results[rule][0] != "not-judged"]
        n = len(rs)
        clean = rs.count("agree-clean")
        flag = rs.count("agree-flag")
        docd = rs.count("documented")
        bad = n - clean - flag - docd
        pct = "%.1f%%" % (100.0 * (clean + flag) / n) if n else "-"
        pct2 = "%.1f%%" % (100.0 * (clean + flag + docd) / n) if n else "-"
        if rule == CRASH and n == clean:
            continue  # no crash: no row
        w("| %s | %d | %d | %d | %d | %d | %s | %s |" % (rule if rule in (PARSE, QUOTE, CRASH) else "`%s`" % rule, n, clean, flag, docd, bad, pct, pct2))
    w("")
    w("The API server's verdicts: " + ", ".join(
        "%s %d" % (k, sum(1 for d in judged if d.server.status == k))
        for k in ("accepted", "invalid", "decode")) + ".")
    w("")
    dis = [(d, r) for d in judged for r in RULES + [PARSE, QUOTE, CRASH]
           if r in d.results and d.results[r][0] not in ("agree-clean", "agree-flag", "documented", "not-judged")]
    w("### Disagreements (possible gpuguard bugs)")
    w("")
    if not dis:
        w("None.")
    for d, r in dis:
        w("* `%s` (line %d, %s), `%s`, **%s**: %s" % (d.ident, d.line, d.label(), r, d.results[r][0],
                                                      md_escape(d.results[r][1])))
        w("  * API server: `%s`" % md_escape(d.server.out[:600] or "(accepted)"))
        lf = [f for f in d.lint_raw if f.get("rule") in RULES]
        if d.lint_errors:
            w("  * gpuguard-lint input errors: %s" % "; ".join("`%s`" % md_escape(e[:300]) for e in d.lint_errors))
        w("  * gpuguard-lint: %s" % ("; ".join("`%s: %s [%s]`" % (f.get("field"), md_escape(f.get("message", "")[:200]),
                                                                  f.get("rule")) for f in lf) or "no finding"))
    w("")
    docs_d = [(d, r) for d in judged for r in RULES + [PARSE, QUOTE] if r in d.results and d.results[r][0] == "documented"]
    w("### Documented differences found")
    w("")
    if not docs_d:
        w("None.")
    for d, r in docs_d:
        w("* `%s` (line %d, %s), `%s`: %s" % (d.ident, d.line, d.label(), r, md_escape(d.results[r][1])))
    w("")
    unc = [d for d in judged if getattr(d, "unclassified", None)]
    w("### Other API server errors (not about the compared rules)")
    w("")
    if not unc:
        w("None.")
    for d in unc:
        w("* `%s` (%s): %s" % (d.ident, d.label(), "; ".join("`%s`" % md_escape(u[:300]) for u in d.unclassified)))
    w("")
    changed = [d for d in docs if d.changes]
    if changed:
        w("### Documents adapted before sending")
        w("")
        for d in changed:
            w("* `%s`: %s" % (d.ident, "; ".join(d.changes)))
        w("")
    skipped = [d for d in docs if d.skip]
    w("### Skipped documents")
    w("")
    if not skipped:
        w("None.")
    for d in skipped:
        w("* `%s` (%s): %s" % (d.ident, d.label(), md_escape(d.skip)))
    w("")
    w("### Every compared document")
    w("")
    w("| document | line | object | API server | gpuguard-lint (compared rules) | result |")
    w("|---|---:|---|---|---|---|")
    for d in judged:
        sv = d.server.status
        if sv == "invalid":
            sv = "422 " + ", ".join(sorted({r for r in RULES if server_findings(d)[0] and server_findings(d)[0][r]}) or ["other"])
        elif sv == "decode":
            sv = "400 decode (%s)" % d.server.decode_kind
        elif sv == "client-error":
            sv = "kubectl: unparseable YAML"
        lr = ", ".join(sorted(r for r in RULES if d.lint.get(r)) + (["input error"] if d.lint_errors else [])) or "-"
        res = [v[0] for v in d.results.values()]
        if any(x not in ("agree-clean", "agree-flag", "documented", "not-judged") for x in res):
            verdict = "**disagree**"
        elif "documented" in res:
            verdict = "documented"
        else:
            verdict = "agree"
        w("| `%s` | %d | %s | %s | %s | %s |" % (d.ident, d.line, md_escape(d.label()), sv, lr, verdict))
    return "\n".join(lines) + "\n", len(dis)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lint", required=True, help="gpuguard-lint binary")
    ap.add_argument("--root", required=True, help="repo root (paths are reported relative to it)")
    ap.add_argument("--input", action="append", default=[], help="file or directory (repeatable)")
    ap.add_argument("--label", action="append", default=[], help="how to name the inputs in the report")
    ap.add_argument("--known", help="TSV of documented differences: file, doc index, rule, reason")
    ap.add_argument("--ca-file", help="CA for the kube-root-ca.crt config maps")
    ap.add_argument("--report", help="write the markdown report here")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--dump", help="write every document, both answers and the verdicts here (JSON)")
    ap.add_argument("--versions", default="kube-apiserver", help="the control plane, for the report")
    args = ap.parse_args()
    t0 = time.time()

    files = []
    for inp in args.input:
        if os.path.isdir(inp):
            for dp, dn, fn in os.walk(inp):
                dn.sort()
                for f in sorted(fn):
                    if f.endswith((".yaml", ".yml")):
                        files.append(os.path.join(dp, f))
        elif os.path.exists(inp):
            files.append(inp)
        else:
            print("oracle: no such input: %s" % inp, file=sys.stderr)
            return 2
    work = tempfile.mkdtemp(prefix="gpuguard-oracle.")
    docs, all_docs = [], []
    for path in files:
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(args.root))
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError as e:
            print("oracle: %s: %s" % (path, e), file=sys.stderr)
            continue
        for i, (line, t) in enumerate(split_documents(text)):
            d = Doc(path, rel, i, line, t)
            all_docs.append(d)
            if prepare(d):
                docs.append(d)
    live = [d for d in docs if not d.skip]
    for n, d in enumerate(live):
        d.tmpfile = os.path.join(work, "doc-%04d.yaml" % n)
        with open(d.tmpfile, "w") as f:
            f.write(d.sent)
    ensure_namespaces({d.namespace for d in live if d.namespace}, args.ca_file)
    ensure_service_accounts({p for p in map(pod_service_account, live) if p})
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        list(ex.map(server_check, live))
    if live:
        lint_all(args.lint, live, work)
    known = load_known(args.known)
    for d in live:
        compare(d, known)

    passed = failed = 0
    for d in docs:
        if d.skip:
            print("skip - oracle %s %s: %s" % (d.ident, d.label(), d.skip))
            continue
        bad = [r for r, (st, _) in d.results.items()
               if st not in ("agree-clean", "agree-flag", "documented", "not-judged")]
        if bad:
            failed += 1
            print("FAIL - oracle %s %s" % (d.ident, d.label()))
            for r in bad:
                print("    %s: %s: %s" % (r, d.results[r][0], d.results[r][1]))
            print("    API server: %s" % d.server.out[:1000].replace("\n", "\n      "))
            for f in d.lint_raw:
                if f.get("rule") in RULES:
                    print("    gpuguard-lint: %s: %s [%s]" % (f.get("field"), f.get("message"), f.get("rule")))
        else:
            passed += 1
            print("ok - oracle %s %s" % (d.ident, d.label()))
    if args.dump:
        with open(args.dump, "w") as f:
            json.dump([{"doc": d.ident, "line": d.line, "object": d.label(), "skip": d.skip, "changes": d.changes,
                        "server": d.server.out if d.server else None,
                        "server_status": d.server.status if d.server else None,
                        "decode_kind": d.server.decode_kind if d.server else None,
                        "lint": d.lint_raw, "lint_errors": d.lint_errors,
                        "results": d.results} for d in docs], f, indent=1)
    text, ndis = report(docs, all_docs, files, args, time.time() - t0)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    subprocess.run(["rm", "-rf", work])
    print("oracle: %d documents compared, %d agree (incl. documented differences), %d disagree, %d skipped"
          % (passed + failed, passed, failed, len(docs) - passed - failed))
    print("ORACLE_COUNTS %d %d" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
