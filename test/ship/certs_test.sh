#!/usr/bin/env bash
# shellcheck disable=SC2317  # helpers run through check and not
# certs/make-certs.sh: the certificates it makes, the files it writes, what it
# keeps and replaces on later runs, and (with kubectl) what its kustomize
# directory renders. With a built gpuguard-webhook, the webhook serves the
# certificate and a client that trusts only ca-bundle.pem reaches it under the
# Service's DNS name, also after a renewal.
#
#   test/ship/certs_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=certs
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
SCRIPT=$REPO/certs/make-certs.sh
command -v openssl >/dev/null || { skip "openssl not installed"; finish; }
PY=$(command -v python3 || true)

run_script() { # run_script ARGS... : output in $SHIP_TMP/script.log
  "$SCRIPT" "$@" >"$SHIP_TMP/script.log" 2>&1
}
same_file() { cmp -s "$1" "$2"; }
differs() { ! cmp -s "$1" "$2"; }
cert_text() { openssl x509 -in "$1" -noout -text; }
days_valid() { # days between notBefore and notAfter
  local nb na
  nb=$(openssl x509 -in "$1" -noout -startdate | cut -d= -f2)
  na=$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)
  echo $((($(date -d "$na" +%s) - $(date -d "$nb" +%s)) / 86400))
}
verify_host() { # verify_host CAFILE CERT HOSTNAME
  openssl verify -CAfile "$1" -purpose sslserver -verify_hostname "$3" "$2" >/dev/null 2>&1
}
count_certs() { grep -c "BEGIN CERTIFICATE" "$1"; }
perm() { stat -c %a "$1"; }

A=$SHIP_TMP/a
SVC=gpuguard-webhook.gpuguard-system.svc

# ---- first run ------------------------------------------------------------------------

if run_script --out "$A"; then ok "make-certs.sh --out DIR succeeds"; else fail "make-certs.sh failed: $(cat "$SHIP_TMP/script.log")"; finish; fi
for f in ca.crt ca.key tls.crt tls.key ca-bundle.pem secret.yaml webhook-patch.yaml kustomization.yaml .gitignore; do
  check "writes $f" test -s "$A/$f"
done
check "the output directory is private (700)" test "$(perm "$A")" = 700
check "tls.key is readable only by its owner (600)" test "$(perm "$A/tls.key")" = 600
check "ca.key is readable only by its owner (600)" test "$(perm "$A/ca.key")" = 600
check "secret.yaml is readable only by its owner (600)" test "$(perm "$A/secret.yaml")" = 600
check "the output directory's .gitignore ignores everything" grep -qx '\*' "$A/.gitignore"
check "certs/.gitignore ignores certs/out" grep -qx '/out/' "$REPO/certs/.gitignore"
check "default mode is audit (warn only)" grep -q -- "^- .*manifests/overlays/audit$" "$A/kustomization.yaml"

CA_TEXT=$(cert_text "$A/ca.crt")
LEAF_TEXT=$(cert_text "$A/tls.crt")
check "CA key is ECDSA P-256" grep -q "NIST CURVE: P-256" <<<"$CA_TEXT"
check "serving key is ECDSA P-256" grep -q "NIST CURVE: P-256" <<<"$LEAF_TEXT"
check "signatures are ecdsa-with-SHA256" grep -q "Signature Algorithm: ecdsa-with-SHA256" <<<"$LEAF_TEXT"
check "CA: basicConstraints critical CA:TRUE" grep -A1 "Basic Constraints: critical" <<<"$CA_TEXT" | grep -q "CA:TRUE"
check "CA: keyUsage critical, certificate signing" grep -A1 "Key Usage: critical" <<<"$CA_TEXT" | grep -q "Certificate Sign"
check "serving cert: CA:FALSE" grep -A1 "Basic Constraints: critical" <<<"$LEAF_TEXT" | grep -q "CA:FALSE"
check "serving cert: extendedKeyUsage serverAuth" grep -A1 "Extended Key Usage" <<<"$LEAF_TEXT" | grep -q "TLS Web Server Authentication"
sans=$(grep -A1 "Subject Alternative Name" <<<"$LEAF_TEXT" | tail -n 1 | tr -d ' ')
check "serving cert SANs are exactly $SVC and $SVC.cluster.local (got $sans)" \
  test "$sans" = "DNS:$SVC,DNS:$SVC.cluster.local"
check "serving cert lives 365 days (got $(days_valid "$A/tls.crt"))" test "$(days_valid "$A/tls.crt")" -eq 365
check "CA lives 3650 days (got $(days_valid "$A/ca.crt"))" test "$(days_valid "$A/ca.crt")" -eq 3650
check "serving cert verifies for $SVC" verify_host "$A/ca.crt" "$A/tls.crt" "$SVC"
check "serving cert verifies for $SVC.cluster.local" verify_host "$A/ca.crt" "$A/tls.crt" "$SVC.cluster.local"
check "serving cert does not verify for another name" not verify_host "$A/ca.crt" "$A/tls.crt" "gpuguard-webhook.default.svc"
check "tls.key matches tls.crt" test "$(openssl pkey -in "$A/tls.key" -pubout)" = "$(openssl x509 -in "$A/tls.crt" -noout -pubkey)"
check "ca-bundle.pem is the CA" same_file "$A/ca.crt" "$A/ca-bundle.pem"

if [[ -n $PY ]]; then
  # secret.yaml and the caBundle patch hold exactly the files.
  "$PY" - "$A" >"$SHIP_TMP/decode.log" 2>&1 <<'EOF'
import base64, sys, re
d = sys.argv[1]
def read(n): return open(f"{d}/{n}", "rb").read()
secret = read("secret.yaml").decode()
assert re.search(r"^kind: Secret$", secret, re.M), "not a Secret"
assert re.search(r"^type: kubernetes.io/tls$", secret, re.M), "not type kubernetes.io/tls"
assert re.search(r"^  name: gpuguard-webhook-tls$", secret, re.M), "wrong name"
assert re.search(r"^  namespace: gpuguard-system$", secret, re.M), "wrong namespace"
for key, f in (("tls.crt", "tls.crt"), ("tls.key", "tls.key"), ("ca.crt", "ca.crt")):
    m = re.search(r"^  " + re.escape(key) + r": (\S+)$", secret, re.M)
    assert m, f"no {key} in secret.yaml"
    assert base64.b64decode(m.group(1)) == read(f), f"secret.yaml {key} differs from {f}"
patch = read("webhook-patch.yaml").decode()
m = re.search(r"path: /webhooks/0/clientConfig/caBundle\n  value: (\S+)", patch)
assert m, "no caBundle in webhook-patch.yaml"
assert base64.b64decode(m.group(1)) == read("ca-bundle.pem"), "caBundle differs from ca-bundle.pem"
print("decoded")
EOF
  check "secret.yaml and the caBundle patch hold exactly the generated files ($(tail -n 1 "$SHIP_TMP/decode.log"))" grep -qx decoded "$SHIP_TMP/decode.log"
fi

# ---- a second run keeps everything; --mode only switches the overlay -------------------

cp "$A/ca.crt" "$SHIP_TMP/ca-1.crt"
cp "$A/tls.crt" "$SHIP_TMP/tls-1.crt"
cp "$A/tls.key" "$SHIP_TMP/tls-1.key"
cp "$A/secret.yaml" "$SHIP_TMP/secret-1.yaml"
if run_script --out "$A" --mode enforce; then ok "second run (--mode enforce) succeeds"; else fail "second run: $(cat "$SHIP_TMP/script.log")"; fi
check "second run keeps the CA" same_file "$SHIP_TMP/ca-1.crt" "$A/ca.crt"
check "second run keeps the serving certificate" same_file "$SHIP_TMP/tls-1.crt" "$A/tls.crt"
check "second run keeps the serving key" same_file "$SHIP_TMP/tls-1.key" "$A/tls.key"
check "second run writes the same Secret" same_file "$SHIP_TMP/secret-1.yaml" "$A/secret.yaml"
check "--mode enforce installs manifests/overlays/enforce" grep -q -- "^- .*manifests/overlays/enforce$" "$A/kustomization.yaml"
check "--mode enforce no longer installs the audit overlay" not grep -q "overlays/audit" "$A/kustomization.yaml"

# ---- --check: the renewal job's question ------------------------------------------------

cp "$A/kustomization.yaml" "$SHIP_TMP/kz-before"
if run_script --out "$A" --check; then ok "--check: fresh certificates need nothing (exit 0)"; else fail "--check: $(cat "$SHIP_TMP/script.log")"; fi
check "--check: prints the days left" grep -q "serving certificate: .*(36[45] days left)" "$SHIP_TMP/script.log"
check "--check writes nothing" same_file "$SHIP_TMP/kz-before" "$A/kustomization.yaml"
rc=0
run_script --out "$SHIP_TMP/nothing-here" --check || rc=$?
check "--check without certificates is an error (exit 1, got $rc)" test "$rc" -eq 1

# ---- --renew: a new serving certificate, same CA ----------------------------------------

if run_script --out "$A" --mode enforce --renew; then ok "--renew succeeds"; else fail "--renew: $(cat "$SHIP_TMP/script.log")"; fi
check "--renew keeps the CA (the caBundle does not change)" same_file "$SHIP_TMP/ca-1.crt" "$A/ca.crt"
check "--renew replaces the serving certificate" differs "$SHIP_TMP/tls-1.crt" "$A/tls.crt"
check "--renew replaces the serving key" differs "$SHIP_TMP/tls-1.key" "$A/tls.key"
check "the renewed certificate verifies for $SVC" verify_host "$A/ca-bundle.pem" "$A/tls.crt" "$SVC"

# ---- a serving certificate close to expiry is replaced without being asked ---------------

cat >"$SHIP_TMP/short.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = $SVC
[v3]
subjectAltName = DNS:$SVC, DNS:$SVC.cluster.local
extendedKeyUsage = serverAuth
EOF
openssl req -new -key "$A/tls.key" -config "$SHIP_TMP/short.cnf" -out "$SHIP_TMP/short.csr" 2>/dev/null
openssl x509 -req -in "$SHIP_TMP/short.csr" -CA "$A/ca.crt" -CAkey "$A/ca.key" -set_serial 7 -days 10 \
  -extfile "$SHIP_TMP/short.cnf" -extensions v3 -out "$A/tls.crt" 2>/dev/null
cp "$A/tls.crt" "$SHIP_TMP/short.crt"
rc=0
run_script --out "$A" --mode enforce --check || rc=$?
check "--check: a serving certificate expiring within 30 days is due (exit 3, got $rc)" test "$rc" -eq 3
check "--check: ... and says why" grep -q "renewal due (serving certificate: expires within 30 days)" "$SHIP_TMP/script.log"
check "--check changes nothing" same_file "$SHIP_TMP/short.crt" "$A/tls.crt"
run_script --out "$A" --mode enforce
check "a serving certificate that expires within 30 days is replaced" differs "$SHIP_TMP/short.crt" "$A/tls.crt"
check "and the run says why" grep -q "expires within 30 days" "$SHIP_TMP/script.log"

# ---- --rotate-ca: new CA, the old one stays trusted ---------------------------------------

cp "$A/tls.crt" "$SHIP_TMP/tls-before-rotation.crt"
if run_script --out "$A" --mode enforce --rotate-ca; then ok "--rotate-ca succeeds"; else fail "--rotate-ca: $(cat "$SHIP_TMP/script.log")"; fi
check "--rotate-ca makes a new CA" differs "$SHIP_TMP/ca-1.crt" "$A/ca.crt"
check "--rotate-ca keeps the old CA as ca-previous.crt" same_file "$SHIP_TMP/ca-1.crt" "$A/ca-previous.crt"
check "the caBundle holds the new and the old CA" test "$(count_certs "$A/ca-bundle.pem")" -eq 2
check "the new serving certificate verifies against the new CA alone" verify_host "$A/ca.crt" "$A/tls.crt" "$SVC"
check "the certificate still being served (old CA) verifies against the bundle" \
  verify_host "$A/ca-bundle.pem" "$SHIP_TMP/tls-before-rotation.crt" "$SVC"

# ---- another namespace --------------------------------------------------------------------

B=$SHIP_TMP/b
run_script --out "$B" --namespace gpu-admission --image registry.example.com:5000/ml/gpuguard-webhook:1.2.3
check "--namespace gpu-admission succeeds" test -s "$B/tls.crt"
check "the certificate is for gpuguard-webhook.gpu-admission.svc" \
  verify_host "$B/ca.crt" "$B/tls.crt" gpuguard-webhook.gpu-admission.svc
check "and not for gpuguard-system" not verify_host "$B/ca.crt" "$B/tls.crt" "$SVC"
check "the kustomization sets namespace: gpu-admission" grep -qx "namespace: gpu-admission" "$B/kustomization.yaml"
check "the Secret is in gpu-admission" grep -qx "  namespace: gpu-admission" "$B/secret.yaml"
check "--image sets the image name" grep -qx "  newName: registry.example.com:5000/ml/gpuguard-webhook" "$B/kustomization.yaml"
check "--image sets the tag" grep -qx '  newTag: "1.2.3"' "$B/kustomization.yaml"
cp "$B/tls.crt" "$SHIP_TMP/b-1.crt"
run_script --out "$B"
check "a run for another namespace replaces the certificate (its names are wrong)" differs "$SHIP_TMP/b-1.crt" "$B/tls.crt"
check "the replacement is for gpuguard-system" verify_host "$B/ca.crt" "$B/tls.crt" "$SVC"

# ---- bad arguments --------------------------------------------------------------------------

check "--mode other is refused" not run_script --out "$SHIP_TMP/bad" --mode other
check "an invalid namespace is refused" not run_script --out "$SHIP_TMP/bad" --namespace Bad_NS
check "--days 10 is refused (renewal starts 30 days before expiry)" not run_script --out "$SHIP_TMP/bad" --days 10
check "--ca-days shorter than --days is refused" not run_script --out "$SHIP_TMP/bad" --days 400 --ca-days 365
check "an unknown option is refused" not run_script --out "$SHIP_TMP/bad" --frobnicate
check "--help succeeds" run_script --help

# ---- offline: no network namespace at all ---------------------------------------------------

if command -v unshare >/dev/null && unshare -rn true 2>/dev/null; then
  if unshare -rn "$SCRIPT" --out "$SHIP_TMP/offline" >"$SHIP_TMP/offline.log" 2>&1; then
    ok "make-certs.sh works without any network (unshare -n)"
  else
    fail "make-certs.sh without network: $(cat "$SHIP_TMP/offline.log")"
  fi
else
  skip "offline run: unshare -rn is not permitted here"
fi

# ---- what the kustomize directory renders ----------------------------------------------------

if find_kubectl; then
  if [[ -n $PY ]] && "$PY" -c 'import yaml' 2>/dev/null; then
    for d in "$A" "$B"; do
      if "$KUBECTL" kustomize "$d" >"$d.rendered.yaml" 2>"$SHIP_TMP/kz.log"; then
        ok "kubectl kustomize $(basename "$d") renders"
      else
        fail "kubectl kustomize $d: $(cat "$SHIP_TMP/kz.log")"
        continue
      fi
    done
    "$PY" - "$A" "$B" >"$SHIP_TMP/render.log" 2>&1 <<'EOF'
import base64, sys, yaml
def load(d):
    return [o for o in yaml.safe_load_all(open(d + ".rendered.yaml")) if o]
def check(ok, what):
    print(("ok - " if ok else "FAIL - ") + what)
for d, ns in ((sys.argv[1], "gpuguard-system"), (sys.argv[2], "gpuguard-system")):
    objs = load(d)
    bundle = open(d + "/ca-bundle.pem", "rb").read()
    vwc = [o for o in objs if o["kind"] == "ValidatingWebhookConfiguration"]
    check(len(vwc) == 1, f"{d}: one ValidatingWebhookConfiguration")
    hook = vwc[0]["webhooks"][0]
    check(base64.b64decode(hook["clientConfig"].get("caBundle", "")) == bundle, f"{d}: caBundle is ca-bundle.pem")
    sec = [o for o in objs if o["kind"] == "Secret" and o["metadata"]["name"] == "gpuguard-webhook-tls"]
    check(len(sec) == 1 and sec[0]["metadata"]["namespace"] == ns, f"{d}: Secret gpuguard-webhook-tls in {ns}")
    dep = [o for o in objs if o["kind"] == "Deployment"][0]
    vols = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
    check(vols["tls"]["secret"]["secretName"] == "gpuguard-webhook-tls", f"{d}: the Deployment mounts that Secret")
EOF
    while IFS= read -r line; do
      case $line in "ok - "*) ok "${line#ok - }" ;; "FAIL - "*) fail "${line#FAIL - }" ;; *) fail "render check: $line" ;; esac
    done <"$SHIP_TMP/render.log"

    # Another namespace: everything moves, nothing still points at gpuguard-system.
    run_script --out "$B" --namespace gpu-admission --mode enforce
    if "$KUBECTL" kustomize "$B" >"$B.rendered.yaml" 2>"$SHIP_TMP/kz.log"; then
      "$PY" - "$B" >"$SHIP_TMP/ns.log" 2>&1 <<'EOF'
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1] + ".rendered.yaml")) if o]
def check(ok, what):
    print(("ok - " if ok else "FAIL - ") + what)
ns = "gpu-admission"
names = [o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"]
check(names == [ns], f"--namespace: the Namespace object is {ns} (got {names})")
wrong = [f'{o["kind"]}/{o["metadata"]["name"]}' for o in objs
         if o["kind"] not in ("Namespace", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                              "ClusterRole", "ClusterRoleBinding")
         and o["metadata"].get("namespace") != ns]
check(not wrong, f"--namespace: every namespaced object is in {ns} (not: {wrong})")
subjects = [s for o in objs if o["kind"] == "ClusterRoleBinding" for s in o.get("subjects", [])]
check(subjects and all(s.get("namespace") == ns for s in subjects),
      f"--namespace: the cluster facts' ClusterRoleBinding names the ServiceAccount in {ns} (got {subjects})")
for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):  # enforce ships both
    found = [o for o in objs if o["kind"] == kind]
    check(len(found) == 1, f"--namespace: one {kind}")
    if not found:
        continue
    hook = found[0]["webhooks"][0]
    check(hook["clientConfig"]["service"]["namespace"] == ns, f"--namespace: the {kind} calls the Service in " + ns)
    check(bool(hook["clientConfig"].get("caBundle")), f"--namespace: the {kind} has the caBundle")
    values = hook["namespaceSelector"]["matchExpressions"][0]["values"]
    check(values == ["kube-system", ns], f"--namespace: the {kind}'s namespaceSelector excludes kube-system and {ns} (got {values})")
left = [f'{o["kind"]}/{o["metadata"]["name"]}' for o in objs
        if o["kind"] != "ConfigMap" and "gpuguard-system" in yaml.safe_dump(o)]
check(not left, f"--namespace: nothing refers to gpuguard-system any more (still: {left})")
EOF
      while IFS= read -r line; do
        case $line in "ok - "*) ok "${line#ok - }" ;; "FAIL - "*) fail "${line#FAIL - }" ;; *) fail "namespace check: $line" ;; esac
      done <"$SHIP_TMP/ns.log"
    else
      fail "kubectl kustomize (--namespace gpu-admission): $(cat "$SHIP_TMP/kz.log")"
    fi
  else
    skip "render checks: python3 with PyYAML (Debian: python3-yaml) not found"
  fi
else
  skip "render checks: $KUBECTL_MISSING"
fi

# ---- the webhook serves the certificate -------------------------------------------------------

WEBHOOK=$(find_binary "$BUILD" gpuguard-webhook)
if [[ -z $WEBHOOK ]]; then
  skip "serving check: no gpuguard-webhook built in $BUILD"
elif ! command -v curl >/dev/null || [[ -z $PY ]]; then
  skip "serving check: needs curl and python3"
else
  PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  C=$SHIP_TMP/c
  run_script --out "$C"
  "$WEBHOOK" --tls-cert-file="$C/tls.crt" --tls-private-key-file="$C/tls.key" --bind-address=127.0.0.1 --port="$PORT" \
    >"$SHIP_TMP/webhook.log" 2>&1 &
  WH_PID=$!
  trap 'kill "$WH_PID" 2>/dev/null; wait "$WH_PID" 2>/dev/null; rm -rf "$SHIP_TMP"' EXIT
  get() { # get PATH : over TLS, trusting only ca-bundle.pem, under the Service's name
    curl -sS --max-time 3 --cacert "$C/ca-bundle.pem" --resolve "$SVC:$PORT:127.0.0.1" -o /dev/null -w '%{http_code}' \
      "https://$SVC:$PORT$1" 2>/dev/null
  }
  code=
  for _ in $(seq 1 50); do
    code=$(get /healthz) && [[ $code == 200 ]] && break
    kill -0 "$WH_PID" 2>/dev/null || break
    sleep 0.2
  done
  check "gpuguard-webhook serves the generated certificate: /healthz over TLS for $SVC answers 200 (got ${code:-nothing})" test "$code" = 200
  serial() { # the serial of the certificate the webhook serves
    openssl s_client -connect "127.0.0.1:$PORT" -servername "$SVC" </dev/null 2>/dev/null | openssl x509 -noout -serial
  }
  before=$(serial)
  run_script --out "$C" --renew
  want=$(openssl x509 -in "$C/tls.crt" -noout -serial)
  now=
  for _ in $(seq 1 50); do
    now=$(serial)
    [[ $now == "$want" ]] && break
    sleep 0.2
  done
  check "after --renew the webhook serves the new certificate without a restart ($before -> $now)" test "$now" = "$want"
  check "and it still verifies under the Service's name" test "$(get /healthz)" = 200
  kill "$WH_PID" 2>/dev/null
  wait "$WH_PID" 2>/dev/null
fi

finish
