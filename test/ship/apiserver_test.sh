#!/usr/bin/env bash
# The rendered installs against a real kube-apiserver (the e2e suite's, on loopback):
# `kubectl apply --dry-run=server --validate=strict` of every Helm chart profile, of what
# `certs/make-certs.sh` + `kubectl apply -k certs/out` would send in audit and enforce mode,
# and of the kustomize components (test/ship/server_dry_run.sh). Every field is checked
# against the server's schema (a misspelt field fails), and the server runs its own
# validation. Objects of CRDs the server lacks (ServiceMonitor, Certificate...) are named
# and left out.
#
# Skipped unless the e2e suite's control plane is built and cached
# (test/e2e/build-controlplane.sh).
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
# The e2e suite's control plane (test/e2e/build-controlplane.sh), newest cached release first.
controlplane=$(ls -d "$CACHE"/controlplane-v*/ 2>/dev/null | sort -V | tail -n 1)
KUBE_APISERVER=${KUBE_APISERVER:-${controlplane%/}/kube-apiserver}
ETCD=${ETCD:-${controlplane%/}/etcd}
if [[ -z $controlplane || ! -x $KUBE_APISERVER || ! -x $ETCD ]]; then
  skip "no cached control plane ($CACHE/controlplane-v*): run test/e2e/build-controlplane.sh first"
  finish
fi
export KUBE_APISERVER ETCD
if ! find_kubectl_or_cached; then
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

# Every install variant (chart profiles, script installs, kustomize components), through the
# same function the e2e suite can call (test/ship/server_dry_run.sh).
# shellcheck source=test/ship/server_dry_run.sh
source "$SHIP_HERE/server_dry_run.sh"
RENDERS=$SHIP_TMP/renders
ship_render_installs "$RENDERS"
ship_server_dry_run "$KUBECONFIG" "$RENDERS"/*.yaml
for mode in audit enforce; do
  log=$RENDERS/script-$mode.served.yaml.log
  for kind in deployment.apps/gpuguard-webhook validatingwebhookconfiguration.admissionregistration.k8s.io/gpuguard \
    poddisruptionbudget.policy/gpuguard-webhook service/gpuguard-webhook secret/gpuguard-webhook-tls configmap/gpuguard-policy; do
    check "script install, $mode: $kind created (server dry run)" grep -qF "$kind created (server dry run)" "$log"
  done
done

finish
