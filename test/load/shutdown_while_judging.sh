#!/usr/bin/env bash
# SIGTERM while large requests are judged (issue 23: 13 s with
# --shutdown-timeout=5s, a log line every 100 ms). Posts K AdmissionReviews of a
# Pod with N containers at once to a webhook with one judging thread, sends
# SIGTERM once the first is being judged, and reports how long the webhook took
# to exit and how many "shutdown timeout" lines it logged.
#
#   test/load/shutdown_while_judging.sh [-b BINARY] [-n CONTAINERS] [-k REQUESTS] [-t SHUTDOWN_TIMEOUT]
#
# Exits 1 when the exit took longer than the shutdown timeout plus 1 s, the
# exit status was not 0, or the timeout was logged more than once.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/gpuguard-webhook CONTAINERS=15000 REQUESTS=3 TIMEOUT=5
while getopts "b:n:k:t:h" o; do
  case $o in
    b) BIN=$OPTARG ;; n) CONTAINERS=$OPTARG ;; k) REQUESTS=$OPTARG ;; t) TIMEOUT=$OPTARG ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
WORK=$(mktemp -d /tmp/gpuguard-shutdown.XXXXXX)
PID=""
cleanup() {
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null || true
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
python3 "$ROOT/test/load/big_pod_review.py" "$CONTAINERS" "$WORK/review.json"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" --tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" --port="$PORT" \
  --bind-address=127.0.0.1 --judge-threads=1 --shutdown-timeout="${TIMEOUT}s" --log-level=info 2>"$WORK/log" &
PID=$!
for _ in $(seq 100); do curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo "shutdown_while_judging.sh: $(basename "$BIN"), $REQUESTS x $(stat -c %s "$WORK/review.json") bytes ($CONTAINERS containers), --shutdown-timeout=${TIMEOUT}s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REQUESTS"); do
  curl -sk -o /dev/null --max-time 60 --data-binary @"$WORK/review.json" -H 'Content-Type: application/json' \
    "https://127.0.0.1:$PORT/validate?timeout=30s" &
done
sleep 1  # the bodies are sent; the first is being judged
start=$(date +%s.%N)
kill -TERM "$PID"
status=0
wait "$PID" || status=$?
PID=""
took=$(echo "$(date +%s.%N) - $start" | bc)
lines=$(grep -c "shutdown timeout" "$WORK/log" || true)
echo "exit status $status after ${took} s; \"shutdown timeout\" logged $lines time(s)"
grep -E "shutdown timeout|stopped" "$WORK/log" | head -3
fail=0
[ "$status" = 0 ] || { echo "FAIL: exit status $status"; fail=1; }
(( $(echo "$took > $TIMEOUT + 1" | bc) )) && { echo "FAIL: took longer than --shutdown-timeout + 1 s"; fail=1; }
[ "$lines" -le 1 ] || { echo "FAIL: the shutdown timeout was logged $lines times"; fail=1; }
[ $fail = 0 ] && echo PASS
exit $fail
