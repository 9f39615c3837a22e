#!/usr/bin/env bash
# make-certs.sh: a private CA and a serving certificate for gpuguard-webhook,
# made offline with openssl, and a kustomize directory that installs gpuguard
# with them:
#
#   certs/make-certs.sh                  # audit mode (warn only), namespace gpuguard-system
#   kubectl apply -k certs/out
#   ...later...
#   certs/make-certs.sh --mode enforce   # same certificates, enforcing
#   kubectl apply -k certs/out
#
# What it writes to the output directory (default certs/out/, which git ignores;
# it holds private keys: never commit it):
#   ca.key, ca.crt          the CA (ECDSA P-256, 10 years). Kept across runs.
#   tls.key, tls.crt        the serving certificate (ECDSA P-256, 1 year) for
#                           gpuguard-webhook.<ns>.svc and .svc.cluster.local
#   ca-bundle.pem           what the API server trusts: ca.crt (+ the previous CA
#                           after --rotate-ca, until it expires)
#   secret.yaml             Secret gpuguard-webhook-tls (kubernetes.io/tls)
#   webhook-patch.yaml      puts ca-bundle.pem into the webhook configurations' caBundle
#   kustomization.yaml      manifests/overlays/<mode> + secret.yaml + the patch
#
# Running it again is safe: existing certificates are reused while they are
# valid for the namespace, signed by the current CA and not within 30 days of
# expiry, so only the mode (or image) changes. Renewing the serving certificate
# (--renew) keeps the CA, so the caBundle does not change and nothing is
# rejected while the new Secret reaches the pods.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: certs/make-certs.sh [options]

Makes a CA and a serving certificate for gpuguard-webhook and writes a kustomize
directory that installs gpuguard with them (kubectl apply -k DIR).

Options:
  --mode audit|enforce   which overlay of manifests/overlays to install (default: audit,
                         warn only; switch to enforce once the warnings are understood)
  --namespace NS         namespace to install into (default: gpuguard-system)
  --out DIR              output directory (default: certs/out next to this script)
  --image REF            webhook image, e.g. registry.example.com/gpuguard-webhook:0.1.0
                         (default: the manifests' ghcr.io/gpuguard/gpuguard-webhook:0.1.0)
  --days N               serving certificate lifetime in days (default: 365)
  --ca-days N            CA lifetime in days (default: 3650)
  --renew                issue a new serving certificate even if the current one is good
  --rotate-ca            make a new CA and serving certificate; the old CA stays in the
                         caBundle until it expires, so the switch needs no downtime
  --check                change nothing; say when the certificates in --out expire and
                         exit 0 if nothing needs renewing, 3 if a run would renew the
                         serving certificate (or the CA needs --rotate-ca), 1 on error.
                         For a monthly job: --check || { make-certs.sh && kubectl apply -k DIR; }
  -h, --help             this help

Needs only openssl (1.1.1 or later, or LibreSSL). Works offline.
EOF
}

die() { printf 'make-certs.sh: %s\n' "$*" >&2; exit 1; }
say() { printf '%s\n' "$*"; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/.." && pwd -P)

MODE=audit
NAMESPACE=gpuguard-system
OUT=$HERE/out
IMAGE=
DAYS=365
CA_DAYS=3650
RENEW=0
ROTATE_CA=0
CHECK=0
SERVICE=gpuguard-webhook          # the Service in manifests/base/service.yaml
SECRET=gpuguard-webhook-tls       # the Secret the Deployment mounts
DEFAULT_NAMESPACE=gpuguard-system # the namespace the manifests are written for
RENEW_WITHIN_DAYS=30

while [[ $# -gt 0 ]]; do
  case $1 in
    --mode) MODE=${2:?--mode needs a value}; shift 2 ;;
    --mode=*) MODE=${1#*=}; shift ;;
    --namespace|-n) NAMESPACE=${2:?--namespace needs a value}; shift 2 ;;
    --namespace=*) NAMESPACE=${1#*=}; shift ;;
    --out) OUT=${2:?--out needs a value}; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --image) IMAGE=${2:?--image needs a value}; shift 2 ;;
    --image=*) IMAGE=${1#*=}; shift ;;
    --days) DAYS=${2:?--days needs a value}; shift 2 ;;
    --days=*) DAYS=${1#*=}; shift ;;
    --ca-days) CA_DAYS=${2:?--ca-days needs a value}; shift 2 ;;
    --ca-days=*) CA_DAYS=${1#*=}; shift ;;
    --renew) RENEW=1; shift ;;
    --rotate-ca) ROTATE_CA=1; shift ;;
    --check) CHECK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

case $MODE in audit|enforce) ;; *) die "--mode must be audit or enforce, got \"$MODE\"" ;; esac
# An RFC 1123 label: what Kubernetes accepts as a namespace name.
[[ $NAMESPACE =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]] || die "--namespace \"$NAMESPACE\" is not a valid namespace name"
[[ $DAYS =~ ^[1-9][0-9]*$ ]] || die "--days must be a positive number of days, got \"$DAYS\""
[[ $CA_DAYS =~ ^[1-9][0-9]*$ ]] || die "--ca-days must be a positive number of days, got \"$CA_DAYS\""
((DAYS > RENEW_WITHIN_DAYS)) || die "--days must be more than $RENEW_WITHIN_DAYS (certificates are renewed $RENEW_WITHIN_DAYS days before they expire)"
((CA_DAYS >= DAYS)) || die "--ca-days ($CA_DAYS) must be at least --days ($DAYS)"
if [[ -n $IMAGE && ! $IMAGE =~ ^[A-Za-z0-9][A-Za-z0-9._/:@-]*$ ]]; then die "--image \"$IMAGE\" is not an image reference"; fi
command -v openssl >/dev/null || die "openssl not found (Debian/Ubuntu: apt-get install openssl)"
[[ -d $REPO/manifests/overlays/$MODE ]] || die "$REPO/manifests/overlays/$MODE not found: run the script from a gpuguard checkout"

DNS1=$SERVICE.$NAMESPACE.svc
DNS2=$SERVICE.$NAMESPACE.svc.cluster.local

if [[ $CHECK == 1 ]]; then
  [[ -f $OUT/ca.crt && -f $OUT/tls.crt ]] || die "no certificates in $OUT to check (run without --check first)"
fi
umask 077
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
# Private keys live here: keep the directory out of git wherever it is.
[[ -f $OUT/.gitignore ]] || printf '# written by certs/make-certs.sh: private keys, never commit\n*\n' >"$OUT/.gitignore"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuguard-certs.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# ---- helpers ----------------------------------------------------------------------

new_key() { # new_key FILE : an ECDSA P-256 key in PKCS#8 PEM
  openssl ecparam -name prime256v1 -genkey -noout -out "$TMP/sec1.pem"
  openssl pkcs8 -topk8 -nocrypt -in "$TMP/sec1.pem" -out "$1"
  rm -f "$TMP/sec1.pem"
  chmod 600 "$1"
}

serial() { printf '0x%s' "$(openssl rand -hex 16)"; }

pubkey_of_cert() { openssl x509 -in "$1" -noout -pubkey 2>/dev/null; }
pubkey_of_key() { openssl pkey -in "$1" -pubout 2>/dev/null; }

valid_for_days() { # valid_for_days CERT DAYS : true if CERT is still valid DAYS days from now
  openssl x509 -in "$1" -noout -checkend $(($2 * 86400)) >/dev/null 2>&1
}

# base64 on one line, on GNU and BSD alike
b64() { openssl base64 -A -in "$1"; }

relpath() { # relpath TARGET FROM : TARGET relative to FROM (both absolute, physical)
  local target=$1 from=$2 up="" rest
  while :; do
    if [[ $target == "$from" ]]; then rest=""; break; fi
    if [[ $from == / ]]; then rest=${target#/}; break; fi
    if [[ $target == "$from"/* ]]; then rest=${target#"$from"/}; break; fi
    from=$(dirname "$from")
    up="../$up"
  done
  rest="$up$rest"
  rest=${rest%/}
  printf '%s\n' "${rest:-.}"
}

make_ca() {
  cat >"$TMP/ca.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = gpuguard-webhook-ca
[v3_ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
  new_key "$OUT/ca.key"
  openssl req -new -x509 -sha256 -key "$OUT/ca.key" -days "$CA_DAYS" -set_serial "$(serial)" \
    -config "$TMP/ca.cnf" -extensions v3_ca -out "$OUT/ca.crt"
  chmod 644 "$OUT/ca.crt"
  say "  new CA:                  $OUT/ca.crt (valid $CA_DAYS days)"
}

make_leaf() {
  cat >"$TMP/leaf.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = $DNS1
[v3_leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:$DNS1, DNS:$DNS2
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
  new_key "$TMP/tls.key"
  openssl req -new -sha256 -key "$TMP/tls.key" -config "$TMP/leaf.cnf" -out "$TMP/tls.csr"
  openssl x509 -req -sha256 -in "$TMP/tls.csr" -CA "$OUT/ca.crt" -CAkey "$OUT/ca.key" \
    -set_serial "$(serial)" -days "$DAYS" -extfile "$TMP/leaf.cnf" -extensions v3_leaf \
    -out "$TMP/tls.crt" 2>"$TMP/x509.log" || { cat "$TMP/x509.log" >&2; die "signing the serving certificate failed"; }
  chmod 600 "$TMP/tls.key"
  chmod 644 "$TMP/tls.crt"
  # rename into place: a reader never sees a key without its certificate
  mv "$TMP/tls.key" "$OUT/tls.key"
  mv "$TMP/tls.crt" "$OUT/tls.crt"
  say "  new serving certificate: $OUT/tls.crt ($DNS1, valid $DAYS days)"
}

leaf_problem() { # why the current serving certificate must be replaced ("" if it is fine)
  [[ -f $OUT/tls.crt && -f $OUT/tls.key ]] || { echo "none yet"; return; }
  openssl verify -CAfile "$OUT/ca.crt" "$OUT/tls.crt" >/dev/null 2>&1 || { echo "not signed by the current CA"; return; }
  [[ "$(pubkey_of_cert "$OUT/tls.crt")" == "$(pubkey_of_key "$OUT/tls.key")" ]] || { echo "tls.key does not match tls.crt"; return; }
  local text
  text=$(openssl x509 -in "$OUT/tls.crt" -noout -text)
  if ! grep -qF "DNS:$DNS1," <<<"$text" || ! grep -qF "DNS:$DNS2" <<<"$text"; then
    echo "not valid for $DNS1"
    return
  fi
  valid_for_days "$OUT/tls.crt" "$RENEW_WITHIN_DAYS" || { echo "expires within $RENEW_WITHIN_DAYS days"; return; }
  valid_for_days "$OUT/ca.crt" "$RENEW_WITHIN_DAYS" || { echo "the CA expires within $RENEW_WITHIN_DAYS days"; return; }
}

# ---- --check: report, change nothing ----------------------------------------------------

days_left() { # whole days until CERT expires (negative once expired)
  echo $((($(date -d "$(openssl x509 -in "$1" -noout -enddate | sed 's/^notAfter=//')" +%s) - $(date +%s)) / 86400))
}
if [[ $CHECK == 1 ]]; then
  say "CA:                  $(openssl x509 -in "$OUT/ca.crt" -noout -enddate | sed 's/^notAfter=//') ($(days_left "$OUT/ca.crt") days left)"
  say "serving certificate: $(openssl x509 -in "$OUT/tls.crt" -noout -enddate | sed 's/^notAfter=//') ($(days_left "$OUT/tls.crt") days left)"
  if ! valid_for_days "$OUT/ca.crt" "$RENEW_WITHIN_DAYS"; then
    say "renewal due: the CA expires within $RENEW_WITHIN_DAYS days; run with --rotate-ca"
    exit 3
  fi
  why=$(leaf_problem)
  if [[ -n $why ]]; then
    say "renewal due (serving certificate: $why): run $0 --out $OUT, then kubectl apply -k $OUT"
    exit 3
  fi
  say "nothing to renew (a run renews the serving certificate $RENEW_WITHIN_DAYS days before it expires)"
  exit 0
fi

# ---- the CA -------------------------------------------------------------------------

say "gpuguard certificates in $OUT (namespace $NAMESPACE, mode $MODE)"
if [[ $ROTATE_CA == 1 && -f $OUT/ca.crt ]]; then
  mv "$OUT/ca.crt" "$OUT/ca-previous.crt"
  rm -f "$OUT/ca.key"
  say "  CA rotated: the old CA stays in the caBundle as ca-previous.crt until it expires"
fi
if [[ ! -f $OUT/ca.crt || ! -f $OUT/ca.key ]]; then
  make_ca
elif ! valid_for_days "$OUT/ca.crt" "$RENEW_WITHIN_DAYS"; then
  die "the CA in $OUT/ca.crt expires within $RENEW_WITHIN_DAYS days: run again with --rotate-ca"
elif [[ "$(pubkey_of_cert "$OUT/ca.crt")" != "$(pubkey_of_key "$OUT/ca.key")" ]]; then
  die "$OUT/ca.key does not match $OUT/ca.crt: restore them, or start over with --rotate-ca"
else
  say "  CA:                      $OUT/ca.crt (kept)"
fi

# ---- the serving certificate ----------------------------------------------------------

why=$(leaf_problem)
if [[ $RENEW == 1 || $ROTATE_CA == 1 ]]; then
  make_leaf
elif [[ -n $why ]]; then
  [[ $why == "none yet" ]] || say "  replacing the serving certificate: $why"
  make_leaf
else
  say "  serving certificate:     $OUT/tls.crt (kept; --renew replaces it)"
fi
openssl verify -CAfile "$OUT/ca.crt" "$OUT/tls.crt" >/dev/null || die "the serving certificate does not verify against the CA"

# ---- what the API server trusts: the CA, and the previous one while it is valid --------

cp "$OUT/ca.crt" "$TMP/bundle.pem"
if [[ -f $OUT/ca-previous.crt ]]; then
  if valid_for_days "$OUT/ca-previous.crt" 0; then
    cat "$OUT/ca-previous.crt" >>"$TMP/bundle.pem"
  else
    rm -f "$OUT/ca-previous.crt"
  fi
fi
chmod 644 "$TMP/bundle.pem"
mv "$TMP/bundle.pem" "$OUT/ca-bundle.pem"

# ---- kubernetes objects ----------------------------------------------------------------

cat >"$OUT/secret.yaml" <<EOF
# Written by certs/make-certs.sh. Holds a private key: never commit it.
apiVersion: v1
kind: Secret
metadata:
  name: $SECRET
  namespace: $NAMESPACE
  labels:
    app.kubernetes.io/name: gpuguard
    app.kubernetes.io/part-of: gpuguard
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$OUT/tls.crt")
  tls.key: $(b64 "$OUT/tls.key")
  ca.crt: $(b64 "$OUT/ca.crt")
EOF

{
  echo "# Written by certs/make-certs.sh: the CA the API server uses to verify gpuguard-webhook."
  echo "- op: add"
  echo "  path: /webhooks/0/clientConfig/caBundle"
  echo "  value: $(b64 "$OUT/ca-bundle.pem")"
  if [[ $NAMESPACE != "$DEFAULT_NAMESPACE" ]]; then
    echo "# gpuguard's own namespace is never sent to the webhook."
    echo "- op: test"
    echo "  path: /webhooks/0/namespaceSelector/matchExpressions/0/values/1"
    echo "  value: $DEFAULT_NAMESPACE"
    echo "- op: replace"
    echo "  path: /webhooks/0/namespaceSelector/matchExpressions/0/values/1"
    echo "  value: $NAMESPACE"
  fi
} >"$OUT/webhook-patch.yaml"

BASE=$(relpath "$REPO/manifests/overlays/$MODE" "$OUT")
{
  echo "# Written by certs/make-certs.sh $(date -u +%Y-%m-%dT%H:%M:%SZ): gpuguard in $MODE mode, namespace $NAMESPACE."
  echo "# Install: kubectl apply -k $OUT"
  echo "# Holds a private key (secret.yaml): never commit this directory."
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  [[ $NAMESPACE == "$DEFAULT_NAMESPACE" ]] || echo "namespace: $NAMESPACE"
  echo "resources:"
  echo "- $BASE"
  echo "- secret.yaml"
  echo "patches:"
  # The same CA (and namespace) for /validate and, where the overlay ships one
  # (not in audit mode), /mutate: a patch whose target is absent changes nothing.
  for kind in ValidatingWebhookConfiguration MutatingWebhookConfiguration; do
    echo "- path: webhook-patch.yaml"
    echo "  target:"
    echo "    group: admissionregistration.k8s.io"
    echo "    kind: $kind"
    echo "    name: gpuguard"
  done
  if [[ -n $IMAGE ]]; then
    name=$IMAGE tag="" digest=""
    if [[ $IMAGE == *@* ]]; then
      name=${IMAGE%%@*} digest=${IMAGE#*@}
    elif [[ ${IMAGE##*/} == *:* ]]; then
      name=${IMAGE%:*} tag=${IMAGE##*:}
    fi
    echo "images:"
    echo "- name: ghcr.io/gpuguard/gpuguard-webhook"
    echo "  newName: $name"
    [[ -z $tag ]] || echo "  newTag: \"$tag\""
    [[ -z $digest ]] || echo "  digest: $digest"
  fi
} >"$OUT/kustomization.yaml"
chmod 644 "$OUT/kustomization.yaml" "$OUT/webhook-patch.yaml"
chmod 600 "$OUT/secret.yaml"

not_after() { openssl x509 -in "$1" -noout -enddate | sed 's/^notAfter=//'; }
say "  CA valid until:          $(not_after "$OUT/ca.crt")"
say "  serving cert until:      $(not_after "$OUT/tls.crt")"
say ""
if [[ -z $IMAGE ]]; then
  say "Note: no --image given; the pods run image ghcr.io/gpuguard/gpuguard-webhook:0.1.0, which your nodes must be"
  say "able to pull. Build and push the Dockerfile's image, then run again with --image REGISTRY/gpuguard-webhook:TAG."
fi
say "Install or update:  kubectl apply -k $OUT"
say "Then wait for it:   kubectl -n $NAMESPACE rollout status deployment/gpuguard-webhook"
