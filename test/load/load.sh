#!/usr/bin/env bash
# Load and soak test of gpuguard-webhook on loopback, with wrk.
#
#   test/load/load.sh [options]
#     -d SECONDS     measured run (default 30)
#     -w SECONDS     warm-up run before it (default 10)
#     -c N           keep-alive TLS connections (default 200)
#     -t N           wrk threads (default 2)
#     -b BINARY      gpuguard-webhook (default build/gpuguard-webhook)
#     -s FILE        request body (default the ~5 KB real AdmissionReview
#                    test/data/admission-samples/01-*.json)
#     -g KB          allowed RSS growth after warm-up (default 8192 = 8 MiB)
#     -r             rotate the certificate mid-run: a new key pair is
#                    written over the files; zero failed requests allowed
#                    (a second wrk with Connection: close keeps making new
#                    handshakes), then openssl s_client must show the new
#                    serial
#     -k             SIGTERM mid-run: the server must exit 0, wrk must see
#                    no timeouts, no non-2xx, and at most one read error per
#                    connection (the close of a keep-alive connection that a
#                    request was racing onto); connect errors after the
#                    listener closed are expected
#     -W N           --worker-threads of the webhook (default 0: its default)
#
# Prints throughput, p50/p99/p99.9 latency, errors and VmRSS at start,
# after warm-up and at the end; exits 1 when a check fails. A tool, not a
# unit test: run it on a quiet machine for meaningful numbers.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=30 WARMUP=10 CONNS=200 THREADS=2 GROWTH_KB=8192 ROTATE=0 SHUTDOWN=0 WORKERS=0
BIN="" BODY=""
while getopts "d:w:c:t:b:s:g:rkW:h" o; do
  case $o in
    d) DURATION=$OPTARG ;; w) WARMUP=$OPTARG ;; c) CONNS=$OPTARG ;; t) THREADS=$OPTARG ;;
    b) BIN=$OPTARG ;; s) BODY=$OPTARG ;; g) GROWTH_KB=$OPTARG ;; r) ROTATE=1 ;; k) SHUTDOWN=1 ;;
    W) WORKERS=$OPTARG ;;
    *) sed -n '2,30p' "$0"; exit 2 ;;
  esac
done
BIN=${BIN:-$ROOT/build/gpuguard-webhook}
[ -x "$BIN" ] || { echo "load.sh: no gpuguard-webhook binary (build it, or pass -b)" >&2; exit 2; }
if [ -z "$BODY" ]; then BODY=$(ls "$(cd "$(dirname "$0")/../.." && pwd)"/test/data/admission-samples/01-*.json 2>/dev/null | head -1 || true); fi
[ -f "$BODY" ] || { echo "load.sh: no request body (pass -s FILE)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "load.sh: wrk not installed" >&2; exit 2; }

WORK=$(mktemp -d /tmp/gpuguard-load.XXXXXX)
PID=""
cleanup() {
  [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- Certificates: a CA and a serving certificate for 127.0.0.1 with a
# known serial, so a rotation can be told apart.
ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=gpuguard-load-ca" \
    -keyout "$WORK/ca.key" -out "$WORK/ca.crt" 2>/dev/null
}
leaf() {  # leaf SERIAL DIR
  local serial=$1 dir=$2
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$dir/ext"
  openssl x509 -req -in "$dir/tls.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -set_serial "$serial" -days 2 \
    -extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null
}
ca
mkdir -p "$WORK/live" "$WORK/next"
leaf 0x1001 "$WORK/live"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL="https://127.0.0.1:$PORT/validate"

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$PID/status" 2>/dev/null || echo 0; }
served_serial() {
  openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$WORK/ca.crt" -verify_return_error </dev/null 2>/dev/null |
    openssl x509 -noout -serial 2>/dev/null | cut -d= -f2
}

"$BIN" --tls-cert-file="$WORK/live/tls.crt" --tls-private-key-file="$WORK/live/tls.key" \
  --bind-address=127.0.0.1 --port="$PORT" --tls-reload-interval=500ms --log-level=warn \
  --worker-threads="$WORKERS" >"$WORK/webhook.log" 2>&1 &
PID=$!
for _ in $(seq 100); do
  curl -skf "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/webhook.log" >&2; echo "load.sh: the webhook did not start" >&2; exit 1; }
  sleep 0.1
done
RSS_START=$(rss)
echo "webhook $BIN pid $PID on $URL; body $(basename "$BODY") ($(wc -c <"$BODY") bytes)"
echo "wrk: $CONNS connections, $THREADS threads; warm-up ${WARMUP}s, run ${DURATION}s"

export GPUGUARD_LOAD_BODY=$BODY
run_wrk() {  # run_wrk SECONDS CONNECTIONS THREADS OUT [env...]
  local secs=$1 conns=$2 threads=$3 out=$4
  wrk -t"$threads" -c"$conns" -d"${secs}s" --timeout 5s -s "$ROOT/test/load/admission.lua" "$URL" >"$out" 2>&1 || true
}
field() { grep -o "$1=[0-9.]*" "$2" | head -1 | cut -d= -f2; }

if [ "$WARMUP" -gt 0 ]; then
  run_wrk "$WARMUP" "$CONNS" "$THREADS" "$WORK/warmup.out"
  echo "warm-up: $(grep RESULT "$WORK/warmup.out" | sed 's/^RESULT //')"
fi
RSS_WARM=$(rss)

fail=0
check() { if ! eval "$1"; then echo "FAIL: $2"; fail=1; fi; }

run_wrk "$DURATION" "$CONNS" "$THREADS" "$WORK/run.out" &
WRK=$!
CLOSE_WRK=""
if [ "$ROTATE" = 1 ]; then
  GPUGUARD_LOAD_CLOSE=1 run_wrk "$DURATION" 4 1 "$WORK/close.out" &
  CLOSE_WRK=$!
fi
if [ "$ROTATE" = 1 ] || [ "$SHUTDOWN" = 1 ]; then
  sleep $((DURATION / 2))
fi
if [ "$ROTATE" = 1 ]; then
  OLD_SERIAL=$(served_serial)
  leaf 0x2002 "$WORK/next"
  # As a Secret volume update or cert-manager renewal lands: each file is
  # replaced by a rename, the key first, so for a moment the pair mismatches.
  cp "$WORK/next/tls.key" "$WORK/live/.tls.key.new" && mv -f "$WORK/live/.tls.key.new" "$WORK/live/tls.key"
  cp "$WORK/next/tls.crt" "$WORK/live/.tls.crt.new" && mv -f "$WORK/live/.tls.crt.new" "$WORK/live/tls.crt"
  echo "rotation: wrote serial 2002 over $OLD_SERIAL at $(date +%T)"
fi
if [ "$SHUTDOWN" = 1 ]; then
  echo "shutdown: SIGTERM at $(date +%T) with $CONNS connections busy"
  RSS_END=$(rss)
  kill -TERM "$PID"
  set +e; wait "$PID"; EXIT=$?; set -e
  PID=""
  check '[ "$EXIT" = 0 ]' "the webhook exited $EXIT after SIGTERM"
fi
wait "$WRK"
[ -n "$CLOSE_WRK" ] && wait "$CLOSE_WRK"
[ "$SHUTDOWN" = 1 ] || RSS_END=$(rss)

R="$WORK/run.out"
grep -q RESULT "$R" || { cat "$R"; echo "FAIL: wrk printed no result"; exit 1; }
echo "run: $(grep RESULT "$R" | sed 's/^RESULT //')"
req=$(field requests "$R"); rps=$(field rps "$R")
p50=$(field p50_ms "$R"); p99=$(field p99_ms "$R"); p999=$(field p999_ms "$R")
cerr=$(field connect_errors "$R"); rerr=$(field read_errors "$R"); werr=$(field write_errors "$R")
serr=$(field status_errors "$R"); terr=$(field timeouts "$R")
printf 'throughput %s req/s (%s requests); latency p50 %s ms, p99 %s ms, p99.9 %s ms\n' "$rps" "$req" "$p50" "$p99" "$p999"
printf 'errors: connect %s, read %s, write %s, non-2xx %s, timeouts %s\n' "$cerr" "$rerr" "$werr" "$serr" "$terr"
printf 'VmRSS: start %s kB, after warm-up %s kB, end %s kB (growth after warm-up %s kB, bound %s kB)\n' \
  "$RSS_START" "$RSS_WARM" "$RSS_END" "$((RSS_END - RSS_WARM))" "$GROWTH_KB"

check '[ "$req" -gt 0 ]' "no request was answered"
check '[ "$serr" = 0 ]' "$serr non-2xx replies"
check '[ "$terr" = 0 ]' "$terr timeouts"
if [ "$SHUTDOWN" = 1 ]; then
  # After the listener closes, reconnects fail (connect errors) and a request
  # written onto a keep-alive connection as the server closed it is a read
  # error: at most one per connection.
  check '[ "$rerr" -le "$CONNS" ]' "$rerr read errors for $CONNS connections"
  check '[ "$werr" -le "$CONNS" ]' "$werr write errors for $CONNS connections"
else
  check '[ "$cerr" = 0 ] && [ "$rerr" = 0 ] && [ "$werr" = 0 ]' "socket errors under load"
  check '[ $((RSS_END - RSS_WARM)) -le "$GROWTH_KB" ]' "RSS grew $((RSS_END - RSS_WARM)) kB after warm-up"
fi
if [ "$ROTATE" = 1 ]; then
  C="$WORK/close.out"
  echo "new-connection load: $(grep RESULT "$C" | sed 's/^RESULT //')"
  for k in connect_errors read_errors write_errors status_errors timeouts; do
    v=$(field "$k" "$C")
    check '[ "${v:-1}" = 0 ]' "$k=$v on the Connection: close load across the rotation"
  done
  NEW_SERIAL=$(served_serial)
  echo "rotation: s_client now sees serial $NEW_SERIAL"
  check '[ "$NEW_SERIAL" = 2002 ]' "new handshakes present serial $NEW_SERIAL, not 2002"
fi
if [ -s "$WORK/webhook.log" ]; then
  echo "webhook log (warnings and errors, last 5):"; tail -5 "$WORK/webhook.log"
fi
[ "$fail" = 0 ] && echo "load.sh: PASS" || { echo "load.sh: FAIL"; exit 1; }
