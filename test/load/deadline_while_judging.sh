#!/usr/bin/env bash
# The red team's unbounded judging queue of issue 23: K clients post a large
# AdmissionReview with ?timeout=T s and give up after T s (as the API server
# does), to a webhook with one judging thread. Reports each client's HTTP code
# (000/100: gave up), the CPU the webhook spent, and how long it stayed busy
# after the clients were gone.
#
#   test/load/deadline_while_judging.sh [-b BINARY] [-n CONTAINERS] [-k CLIENTS] [-t TIMEOUT_SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/gpuguard-webhook CONTAINERS=15000 CLIENTS=12 TIMEOUT=3
while getopts "b:n:k:t:h" o; do
  case $o in
    b) BIN=$OPTARG ;; n) CONTAINERS=$OPTARG ;; k) CLIENTS=$OPTARG ;; t) TIMEOUT=$OPTARG ;;
    *) sed -n '2,9p' "$0"; exit 2 ;;
  esac
done
WORK=$(mktemp -d /tmp/gpuguard-deadline.XXXXXX)
PID=""
cleanup() { [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
python3 "$ROOT/test/load/big_pod_review.py" "$CONTAINERS" "$WORK/review.json"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" --tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" --port="$PORT" \
  --bind-address=127.0.0.1 --judge-threads=1 --log-level=warn 2>"$WORK/log" &
PID=$!
for _ in $(seq 100); do curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo "deadline_while_judging.sh: $(basename "$BIN"), $CLIENTS x $CONTAINERS containers, ?timeout=${TIMEOUT}s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }  # clock ticks
before=$(cpu) start=$(date +%s.%N)
for _ in $(seq "$CLIENTS"); do
  curl -sk -o /dev/null -w "%{http_code} " --max-time "$TIMEOUT" --data-binary @"$WORK/review.json" \
    -H 'Content-Type: application/json' "https://127.0.0.1:$PORT/validate?timeout=${TIMEOUT}s" >>"$WORK/codes" &
done
wait $(jobs -p | grep -v "^$PID$") 2>/dev/null || true
gone=$(date +%s.%N)
prev=-1
while now=$(cpu); [ "$now" != "$prev" ]; do prev=$now; sleep 0.5; done  # until the webhook is idle
idle=$(date +%s.%N)
ticks=$(getconf CLK_TCK)
echo "client codes: $(cat "$WORK/codes")"
echo "webhook CPU: $(echo "scale=2; ($prev - $before) / $ticks" | bc) s; busy $(echo "scale=1; $idle - $gone - 0.5" | bc) s after the last client gave up or was answered"
