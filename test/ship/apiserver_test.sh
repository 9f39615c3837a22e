#!/usr/bin/env bash
# The rendered install against a real kube-apiserver (the e2e suite's v1.20.2
# on loopback): `kubectl apply --dry-run=server --validate=true` of what
# `certs/make-certs.sh` + `kubectl apply -k certs/out` would send, in audit and
# enforce mode. kubectl validates every field against the server's OpenAPI
# schema (a misspelt field fails), and the server runs its own validation.
# v1.20 has no policy/v1, so the PodDisruptionBudget goes as policy/v1beta1
# (same fields).
#
# Skipped unless the e2e suite's kube-apiserver is built and cached
# (test/e2e/build-apiserver.sh) and etcd is installed.
#
#   test/ship/apiserver_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=apiserver
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
CACHE=${GPUGUARD_E2E_CACHE:-/var/cache/gpuguard-e2e}
if sanitizer_build "$BUILD"; then
  skip "sanitizer build: the manifests do not depend on the build"
  finish
fi
if [[ ! -x ${KUBE_APISERVER:-$CACHE/bin/kube-apiserver} ]] || ! command -v etcd >/dev/null; then
  skip "no cached kube-apiserver ($CACHE/bin) or no etcd: run test/e2e/build-apiserver.sh first"
  finish
fi
if ! find_kubectl; then
  skip "$KUBECTL_MISSING"
  finish
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
E2E_ETCD_PORT=$(free_port)
E2E_APISERVER_PORT=$(free_port)
export E2E_ETCD_PORT E2E_APISERVER_PORT
# shellcheck source=test/e2e/lib.sh
source "$REPO/test/e2e/lib.sh"
e2e_init   # its EXIT trap stops etcd and the API server
trap 'rm -rf "$SHIP_TMP"; e2e_cleanup' EXIT   # e2e_cleanup exits: last
if ! e2e_start_cluster >"$SHIP_TMP/cluster.log" 2>&1; then
  fail "etcd + kube-apiserver did not start: $(tail -n 5 "$SHIP_TMP/cluster.log")"
  finish
fi
ok "kube-apiserver $("$KUBE_APISERVER" --version 2>/dev/null | awk '{print $2}') up on 127.0.0.1:$E2E_APISERVER_PORT"
k() { timeout 60 "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

# Namespaced objects need their namespace to exist for a dry run.
k create namespace gpuguard-system >/dev/null 2>&1

for mode in audit enforce; do
  out=$SHIP_TMP/certs-$mode
  "$REPO/certs/make-certs.sh" --out "$out" --mode "$mode" >/dev/null 2>&1 || { fail "make-certs.sh --mode $mode"; continue; }
  if ! k kustomize "$out" >"$out.yaml" 2>"$SHIP_TMP/kz.log"; then
    fail "kubectl kustomize $mode: $(cat "$SHIP_TMP/kz.log")"
    continue
  fi
  sed -i 's#^apiVersion: policy/v1$#apiVersion: policy/v1beta1#' "$out.yaml"
  if k apply --dry-run=server --validate=true -f "$out.yaml" >"$SHIP_TMP/apply.log" 2>&1; then
    ok "$mode install: every object accepted by the API server (server dry run, schema-validated)"
  else
    fail "$mode install rejected: $(grep -v '^Warning: resource namespaces' "$SHIP_TMP/apply.log")"
  fi
  for kind in deployment.apps/gpuguard-webhook validatingwebhookconfiguration.admissionregistration.k8s.io/gpuguard \
    poddisruptionbudget.policy/gpuguard-webhook service/gpuguard-webhook secret/gpuguard-webhook-tls configmap/gpuguard-policy; do
    check "$mode: $kind created (server dry run)" grep -qF "$kind created (server dry run)" "$SHIP_TMP/apply.log"
  done
done

finish
