#!/usr/bin/env bash
# The red team's memory attack of issue 23 against gpuguard-webhook under a
# memory limit: N connections that each send 40 bytes of a TLS ClientHello and
# stay, while an honest client keeps posting an AdmissionReview.
#
#   test/load/memory_limit.sh [options]
#     -b BINARY   gpuguard-webhook (default build/gpuguard-webhook)
#     -n N        partial handshakes held (default 8000)
#     -l BYTES    memory limit (default 268435456 = 256 MiB, the chart's)
#     -H SECONDS  how long they are held while admissions are posted (default 6)
#     -f          no cgroup: pass --memory-limit and measure VmHWM only
#
# Runs the webhook in a child memory cgroup of this shell's own (cgroup v1 or
# v2; needs root) with that limit, which is what the webhook reads; without
# one (or with -f), passes --memory-limit instead and measures RSS. Prints the
# peak memory (cgroup peak and VmHWM), OOM kills, the connections the webhook
# closed, and the admissions answered; exits 1 when the webhook died or was
# OOM-killed, its peak reached the limit, or an admission failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/gpuguard-webhook COUNT=8000 LIMIT=268435456 HOLD=6 NO_CGROUP=0
while getopts "b:n:l:H:fh" o; do
  case $o in
    b) BIN=$OPTARG ;; n) COUNT=$OPTARG ;; l) LIMIT=$OPTARG ;; H) HOLD=$OPTARG ;; f) NO_CGROUP=1 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
[ -x "$BIN" ] || { echo "memory_limit.sh: no gpuguard-webhook binary (build it, or pass -b)" >&2; exit 2; }
BODY=$(ls "$ROOT"/test/data/admission-samples/01-*.json | head -1)

WORK=$(mktemp -d /tmp/gpuguard-memory.XXXXXX)
PID="" CGROUP="" MONITOR=""
cleanup() {
  [ -n "$MONITOR" ] && kill "$MONITOR" 2>/dev/null || true
  [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  [ -n "$CGROUP" ] && rmdir "$CGROUP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# A child of this shell's own memory cgroup, so that it stays inside whatever
# limits this machine already puts on it.
make_cgroup() {
  local v1 v2 dir
  v1=$(sed -n 's/^[0-9]*:[^:]*\bmemory\b[^:]*://p' /proc/self/cgroup | head -1)
  if [ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ]; then
    dir=/sys/fs/cgroup/memory${v1%/}/gpuguard-memory-$$
    mkdir "$dir" 2>/dev/null || return 1
    echo "$LIMIT" >"$dir/memory.limit_in_bytes" || { rmdir "$dir"; return 1; }
    [ -f "$dir/memory.memsw.limit_in_bytes" ] && echo "$LIMIT" >"$dir/memory.memsw.limit_in_bytes" 2>/dev/null
    CGROUP=$dir PEAK_FILE=memory.max_usage_in_bytes OOM_FILE=memory.oom_control
    return 0
  fi
  v2=$(sed -n 's/^0:://p' /proc/self/cgroup | head -1)
  if [ -n "$v2" ] && [ -f "/sys/fs/cgroup${v2%/}/cgroup.subtree_control" ]; then
    grep -qw memory "/sys/fs/cgroup${v2%/}/cgroup.subtree_control" || return 1
    dir=/sys/fs/cgroup${v2%/}/gpuguard-memory-$$
    mkdir "$dir" 2>/dev/null || return 1
    echo "$LIMIT" >"$dir/memory.max" || { rmdir "$dir"; return 1; }
    [ -f "$dir/memory.swap.max" ] && echo 0 >"$dir/memory.swap.max" 2>/dev/null
    CGROUP=$dir PEAK_FILE=memory.peak OOM_FILE=memory.events
    return 0
  fi
  return 1
}
args=(--tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" --port="$PORT"
      --bind-address=127.0.0.1 --log-level=info)
# Handshakes held for the whole attack (the default 5 s would end them early);
# a binary from before issue 23 has no such flag, and no handshake cap either.
"$BIN" --help | grep -q -- --handshake-timeout && args+=(--handshake-timeout=30s)
if [ "$NO_CGROUP" = 0 ] && make_cgroup; then
  how="cgroup $CGROUP"
  sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CGROUP" "$BIN" "${args[@]}" 2>"$WORK/webhook.log" &
else
  how="no cgroup: --memory-limit=$LIMIT, VmHWM measured"
  "$BIN" --help | grep -q -- --memory-limit && args+=(--memory-limit="$LIMIT")
  "$BIN" "${args[@]}" 2>"$WORK/webhook.log" &
fi
PID=$!
for _ in $(seq 100); do
  curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
echo "memory_limit.sh: $(basename "$BIN") pid $PID, limit $LIMIT bytes, $how; load average $(cut -d' ' -f1-3 /proc/loadavg)"
grep -h '"serving"' "$WORK/webhook.log" || true

# Peak RSS sampled every 50 ms (VmHWM survives too, unless the process dies).
( peak=0; while kill -0 "$PID" 2>/dev/null; do
    r=$(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status" 2>/dev/null || echo 0)
    [ "${r:-0}" -gt "$peak" ] && peak=$r && echo "$peak" >"$WORK/peak_rss_kb"
    sleep 0.05
  done ) &
MONITOR=$!

python3 "$ROOT/test/load/partial_handshakes.py" "$PORT" "$COUNT" "$HOLD" "$BODY" >"$WORK/client.json"
alive=yes; kill -0 "$PID" 2>/dev/null || alive=no
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$PID/status" 2>/dev/null || echo "?")
peak_rss=$(cat "$WORK/peak_rss_kb" 2>/dev/null || echo 0)
cg_peak="" oom=0
if [ -n "$CGROUP" ]; then
  cg_peak=$(cat "$CGROUP/$PEAK_FILE" 2>/dev/null || echo "?")
  oom=$(awk '$1 == "oom_kill" {print $2}' "$CGROUP/$OOM_FILE" 2>/dev/null || echo 0)
fi
echo "client: $(cat "$WORK/client.json")"
echo "webhook alive: $alive; VmHWM ${hwm} kB; peak VmRSS sampled ${peak_rss} kB; cgroup peak ${cg_peak:-n/a} bytes; OOM kills ${oom:-0}"
grep -v '"admission"' "$WORK/webhook.log" | tail -n 5 || true

status=0
[ "$alive" = yes ] || { echo "FAIL: the webhook died"; status=1; }
[ "${oom:-0}" = 0 ] || { echo "FAIL: OOM kill"; status=1; }
[ "$peak_rss" -lt $((LIMIT / 1024)) ] || { echo "FAIL: peak RSS ${peak_rss} kB reached the limit"; status=1; }
python3 - "$WORK/client.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
if r["admissions"] == 0 or r["admissions_ok"] != r["admissions"]:
    print("FAIL: admissions answered %d of %d: %s" % (r["admissions_ok"], r["admissions"], r["failures"]))
    sys.exit(1)
PY
[ $status = 0 ] && echo "PASS"
exit $status
