#!/usr/bin/env bash
# Issue 23's policy-reload soak against the real binary: gpuguard-webhook
# judges one pod with wrk while the --policy file is rewritten in place, over
# and over, with the same content, three ways (one open, truncate-then-write
# in two opens, two writes with a pause between). The policy allows the pod
# and the defaults deny it, so a reload that catches the file empty or
# half-written shows as wrong verdicts. Pass: 0 wrong, 0 successful reloads.
#   test/bench/policy_reload_soak.sh [SECONDS] [CONNECTIONS]    (default 300 s, 16)
# Needs wrk, openssl, build/gpuguard-webhook (or $GPUGUARD_WEBHOOK). Prints the RESULT line of wrk and
# the reload counters from /metrics.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-300}
CONNS=${2:-16}
WORK=$(mktemp -d /tmp/gpuguard-soak.XXXXXX)
PORT=${SOAK_PORT:-$((20000 + RANDOM % 20000))}
cleanup() {
  [ -n "${WRITER:-}" ] && kill "$WRITER" 2>/dev/null || true
  [ -n "${SERVER:-}" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
FIRST='# the GPU pool of this cluster is not tainted
allowSuppressions: false'
SECOND='rules: {gpu-missing-toleration: off}'
printf '%s\n%s\n' "$FIRST" "$SECOND" >"$WORK/policy.yaml"
cp "$WORK/policy.yaml" "$WORK/policy.src"
python3 - "$WORK/body.json" <<'PY'
import json, sys
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
       "spec": {"containers": [{"name": "c", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                                "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
req = {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "namespace": "ml",
       "operation": "CREATE", "object": pod}
json.dump({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}, open(sys.argv[1], "w"))
PY

"${GPUGUARD_WEBHOOK:-build/gpuguard-webhook}" --tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" \
  --bind-address=127.0.0.1 --port="$PORT" --policy="$WORK/policy.yaml" --policy-reload-interval=50ms \
  --log-level=warn 2>"$WORK/webhook.log" &
SERVER=$!
for _ in $(seq 50); do curl -sk "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done

# The writer: same content, in place, three ways, as fast as it goes.
(
  P=$WORK/policy.yaml
  while :; do
    cat "$WORK/policy.src" >"$P"
    : >"$P"; cat "$WORK/policy.src" >"$P"
    { printf '%s\n' "$FIRST"; sleep 0.001; printf '%s\n' "$SECOND"; } >"$P"
  done
) &
WRITER=$!

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
SOAK_BODY=$WORK/body.json wrk -t2 -c"$CONNS" -d"${SECS}s" -s test/bench/policy_reload_soak.lua \
  "https://127.0.0.1:$PORT" | grep RESULT
kill "$WRITER"; WRITER=
curl -sk "https://127.0.0.1:$PORT/metrics" | grep '^gpuguard_policy_reloads_total'
echo "policy reload failures logged: $(grep -c 'policy reload failed' "$WORK/webhook.log" || true)"
