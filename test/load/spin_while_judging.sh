#!/usr/bin/env bash
# The red team's CPU spin of issue 23: clients that post a large AdmissionReview
# (judged off the event loop) and disconnect while it is judged. Counts the
# webhook's epoll_wait calls over 5 s with strace (-c).
#
#   test/load/spin_while_judging.sh [-b BINARY] [-n CONTAINERS] [-k REQUESTS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/gpuguard-webhook CONTAINERS=15000 REQUESTS=3
while getopts "b:n:k:h" o; do
  case $o in b) BIN=$OPTARG ;; n) CONTAINERS=$OPTARG ;; k) REQUESTS=$OPTARG ;; *) sed -n '2,7p' "$0"; exit 2 ;; esac
done
command -v strace >/dev/null || { echo "spin_while_judging.sh: strace not installed" >&2; exit 2; }
WORK=$(mktemp -d /tmp/gpuguard-spin.XXXXXX)
PID=""
cleanup() { [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
python3 "$ROOT/test/load/big_pod_review.py" "$CONTAINERS" "$WORK/review.json"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" --tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" --port="$PORT" \
  --bind-address=127.0.0.1 --judge-threads=1 --log-level=warn 2>"$WORK/log" &
PID=$!
for _ in $(seq 100); do curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
# Each client sends its request, waits 0.5 s and sends its FIN (as the API
# server closing at its timeout, which has read everything the webhook sent:
# a close with unread session tickets would be a reset instead), then stays
# around for the measurement.
python3 - "$PORT" "$WORK/review.json" "$REQUESTS" <<'PY' &
import socket, ssl, sys, time
port, body, n = int(sys.argv[1]), open(sys.argv[2], "rb").read(), int(sys.argv[3])
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
clients = []
for _ in range(n):
    t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    t.sendall(b"POST /validate?timeout=30s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    clients.append(t)
time.sleep(0.5)
for t in clients:
    t.shutdown(socket.SHUT_WR)
time.sleep(7)
PY
sleep 1
echo "spin_while_judging.sh: $(basename "$BIN"), $REQUESTS clients gone while judged; load average $(cut -d' ' -f1-3 /proc/loadavg)"
timeout -s INT 5 strace -f -c -e trace=epoll_wait -p "$PID" 2>&1 | grep -E "epoll_wait|calls" || true
