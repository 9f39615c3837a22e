#!/usr/bin/env bash
# gpuguard-webhook against nginx (a static TLS endpoint: the practical ceiling)
# on loopback, side by side in one run, with wrk on keep-alive connections.
#
#   test/bench/load_vs_nginx.sh [-d SECONDS] [-c "1 32"] [-r REPS] [-v VARIANTS] [BUILD_DIR]
#     BUILD_DIR   where gpuguard-webhook was built (default build; the binary is
#                 BUILD_DIR/gpuguard-webhook).
#                 Nothing is built.
#     -d SECONDS  each measured wrk run (default 10), after a 2 s warm-up
#     -c LIST     connection counts (default "1 32"; wrk -t1 for 1, -t2 otherwise)
#     -r REPS     alternate the servers REPS times per count (default 1); the
#                 ratios are computed from the medians (a busy machine needs >= 3)
#     -v VARIANTS more gpuguard-webhook processes measured in the same run, each
#                 NAME=FLAGS with commas for spaces, e.g.
#                 "loops4=--worker-threads=4 pool=--judge-off-loop-bytes=0,--judge-threads=2"
#     -P PORT     first port (default 23100; one per server)
#     -b BASE_DIR another build's gpuguard-webhook measured in the same run,
#                 named "base": a change against main, A/B, with both ratios
#                 to the same nginx runs
#
# A third peer, when it was built: the cpp-httplib reference server
# (BUILD_DIR/test/httplib_reference/..., review() behind httplib::SSLServer),
# named "httplib".
#
# Both servers get the same certificate (ECDSA P-256, generated here), TLS 1.2
# and 1.3, and the same ~5 KB AdmissionReview POST (make_review_body.py). nginx
# answers a fixed ~300 B AdmissionReview response (worker_processes 2,
# keepalive_requests 1000000, access_log off). Prints for each server and
# concurrency: req/s, p50, p99, server CPU per request (utime+stime deltas of
# the server's processes from /proc/PID/stat) and, for the webhook, VmRSS
# during the load; then the webhook/nginx ratios. Stops what it started.
# GPUGUARD_WEBHOOK_FLAGS adds flags to the webhook's command line (e.g.
# "--log-level=warn" to measure without the log line of each warned request);
# GPUGUARD_WEBHOOK_ENV sets its environment (e.g.
# "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" to try an allocator).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/test/bench"
DURATION=10 CONNS="1 32" REPS=1 VARIANTS="" PORT0=23100 BASE_DIR=""
while getopts "d:c:r:v:P:b:h" o; do
  case $o in
    d) DURATION=$OPTARG ;; c) CONNS=$OPTARG ;; r) REPS=$OPTARG ;; v) VARIANTS=$OPTARG ;; P) PORT0=$OPTARG ;;
    b) BASE_DIR=$OPTARG ;;
    *) sed -n '2,38p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD_DIR=${1:-$ROOT/build}
BIN=$BUILD_DIR/gpuguard-webhook
[ -x "$BIN" ] || { echo "load_vs_nginx.sh: no gpuguard-webhook in $BUILD_DIR (build it first)" >&2; exit 2; }
if [ -n "$BASE_DIR" ] && [ ! -x "$BASE_DIR/gpuguard-webhook" ]; then
  echo "load_vs_nginx.sh: no gpuguard-webhook in $BASE_DIR (-b)" >&2; exit 2
fi
for t in nginx wrk openssl python3; do
  command -v $t >/dev/null || [ -x /usr/sbin/$t ] || { echo "load_vs_nginx.sh: $t not installed" >&2; exit 2; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
SAMPLE=$(ls "$(cd "$(dirname "$0")/../.." && pwd)"/../shared/reference/admission-samples/raw/03-CREATE-Pod-*allowed.json | head -1)

WORK=$(mktemp -d /tmp/gpuguard-bench-load.XXXXXX)
PIDS="" RSS_PID=""
cleanup() {
  for p in $RSS_PID $PIDS; do
    kill "$p" 2>/dev/null || true
  done
  for p in $RSS_PID $PIDS; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# --- certificate (self-signed ECDSA P-256 for 127.0.0.1), body, response
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
python3 "$HERE/make_review_body.py" "$SAMPLE" "$WORK/body.json"
UID_=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["request"]["uid"])' "$WORK/body.json")
RESPONSE="{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"$UID_\",\"allowed\":true,\"status\":{\"metadata\":{},\"code\":200},\"warnings\":[\"gpu-missing-driver-pin: spec.containers[0]: no driver pin (fixed response of the nginx reference)\"]}}"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
NEXT_PORT=$PORT0
next_port() {  # sets PORT to the next free port from PORT0 on
  while ! port_free "$NEXT_PORT"; do NEXT_PORT=$((NEXT_PORT + 1)); done
  PORT=$NEXT_PORT; NEXT_PORT=$((NEXT_PORT + 1))
}

# Servers in measuring order: NAMES, and PORT_/PID_/DESC_ of each.
NAMES=""
declare -A SPORT SPID SDESC
add_server() {  # add_server NAME PID PORT DESCRIPTION
  NAMES="$NAMES $1" SPID[$1]=$2 SPORT[$1]=$3 SDESC[$1]=$4 PIDS="$PIDS $2"
}

# --- nginx: throw-away config, everything in $WORK
next_port; NG_PORT=$PORT
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx.conf" <<NGINX
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 90s;
  client_body_buffer_size 16k;
  server {
    listen 127.0.0.1:$NG_PORT ssl;
    ssl_certificate $WORK/tls.crt;
    ssl_certificate_key $WORK/tls.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / {
      default_type application/json;
      return 200 '$RESPONSE';
    }
  }
}
NGINX
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx.conf" >"$WORK/nginx.out" 2>&1 &
add_server nginx $! "$NG_PORT" "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///'), worker_processes 2"

start_webhook() {  # start_webhook NAME BINARY FLAGS...
  local name=$1 bin=$2; shift 2
  next_port
  env ${GPUGUARD_WEBHOOK_ENV:-} "$bin" --tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" \
    --bind-address=127.0.0.1 --port="$PORT" ${GPUGUARD_WEBHOOK_FLAGS:-} "$@" >"$WORK/$name.log" 2>&1 &
  add_server "$name" $! "$PORT" "$bin ${GPUGUARD_WEBHOOK_FLAGS:-} $*"
}
start_webhook webhook "$BIN"
[ -z "$BASE_DIR" ] || start_webhook base "$BASE_DIR/gpuguard-webhook"
for v in $VARIANTS; do
  # shellcheck disable=SC2046  # the flags are split on the commas
  start_webhook "${v%%=*}" "$BIN" $(tr ',' ' ' <<<"${v#*=}")
done

# The cpp-httplib reference (the edge engineer's test/httplib_reference): the
# same review() behind httplib::SSLServer, when it was built.
HTTPLIB=$(find "$BUILD_DIR" -maxdepth 3 -type f -perm -u+x -name 'gpuguard-httplib-reference' 2>/dev/null | head -1)
if [ -n "$HTTPLIB" ]; then
  next_port
  "$HTTPLIB" --tls-cert-file="$WORK/tls.crt" --tls-private-key-file="$WORK/tls.key" \
    --bind-address=127.0.0.1 --port="$PORT" >"$WORK/httplib.log" 2>&1 &
  add_server httplib $! "$PORT" "$HTTPLIB"
fi

wait_up() {  # wait_up NAME
  local name=$1
  for _ in $(seq 1 100); do
    kill -0 "${SPID[$name]}" 2>/dev/null || { echo "$name exited:" >&2; cat "$WORK"/*.out "$WORK"/*.log >&2 2>/dev/null; exit 1; }
    if curl -sk -o /dev/null "https://127.0.0.1:${SPORT[$name]}/healthz" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$name did not come up" >&2; exit 1
}
for n in $NAMES; do wait_up "$n"; done
reply() { curl -sk -H 'Content-Type: application/json' --data-binary @"$WORK/body.json" "https://127.0.0.1:$1/validate"; }

# All processes of a server: the given PID and its children (nginx workers).
pids_of() { echo "$1"; cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | sed '/^$/d'; }
cpu_ticks() {  # utime+stime of a PID and its children, in clock ticks
  local sum=0 p f
  for p in $(pids_of "$1"); do
    f=$(cat /proc/"$p"/stat 2>/dev/null) || continue
    f=${f##*) }  # fields after "(comm) "; utime and stime are fields 14 and 15
    set -- $f
    sum=$((sum + ${12} + ${13}))
  done
  echo $sum
}
HZ=$(getconf CLK_TCK)
rss_kb() { awk '/^VmRSS:/ {print $2}' /proc/"$1"/status 2>/dev/null || echo 0; }

# The load test's wrk script (test/load/admission.lua): one AdmissionReview
# POSTed on keep-alive connections, a machine-readable RESULT line.
WRK_SCRIPT="$ROOT/test/load/admission.lua"
run() {  # run NAME CONNS
  local name=$1 c=$2 t=2 port=${SPORT[$1]} pid=${SPID[$1]}
  [ "$c" -le 1 ] && t=1
  GPUGUARD_LOAD_BODY="$WORK/body.json" wrk -t"$t" -c"$c" -d2s -s "$WRK_SCRIPT" \
    "https://127.0.0.1:$port/validate" >/dev/null 2>&1 || true
  local before out
  before=$(cpu_ticks "$pid")
  ( peak=0; while :; do r=$(rss_kb "$pid"); [ "$r" -gt "$peak" ] && peak=$r && echo "$peak" >"$WORK/rss.$name.$c"; sleep 0.5; done ) &
  RSS_PID=$!
  out=$(GPUGUARD_LOAD_BODY="$WORK/body.json" wrk -t"$t" -c"$c" -d"${DURATION}s" --timeout 5s \
        -s "$WRK_SCRIPT" "https://127.0.0.1:$port/validate" 2>&1 | grep '^RESULT' || true)
  kill "$RSS_PID" 2>/dev/null; wait "$RSS_PID" 2>/dev/null || true; RSS_PID=""
  local after; after=$(cpu_ticks "$pid")
  [ -n "$out" ] || { echo "wrk gave no result for $name -c$c" >&2; return; }
  local req rps p50 p99 err non2xx cpu rss
  req=$(sed -E 's/.* requests=([0-9]+).*/\1/' <<<"$out"); rps=$(sed -E 's/.* rps=([0-9.]+).*/\1/' <<<"$out")
  p50=$(sed -E 's/.* p50_ms=([0-9.]+).*/\1/' <<<"$out"); p99=$(sed -E 's/.* p99_ms=([0-9.]+).*/\1/' <<<"$out")
  err=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
              print v["connect_errors"] + v["read_errors"] + v["write_errors"] + v["timeouts"] }' <<<"$out")
  non2xx=$(sed -E 's/.* status_errors=([0-9]+).*/\1/' <<<"$out")
  cpu=$(awk -v d=$((after - before)) -v hz="$HZ" -v n="$req" 'BEGIN { printf "%.1f", n ? d / hz * 1e6 / n : 0 }')
  rss=$(cat "$WORK/rss.$name.$c" 2>/dev/null || echo 0)
  echo "$rps $p50 $p99 $cpu" >>"$WORK/res.$name.$c"
  printf '%-8s -c%-3s %9.0f req/s  p50 %7.3f ms  p99 %7.3f ms  CPU %6.1f us/req  RSS %6.1f MiB  errors %s non2xx %s\n' \
    "$name" "$c" "$rps" "$p50" "$p99" "$cpu" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$err" "$non2xx"
}

echo "# load_vs_nginx: $(date -u +%FT%TZ) $(uname -n) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $NAMES; do
  r=$(reply "${SPORT[$n]}")
  echo "# $n (pid ${SPID[$n]}, port ${SPORT[$n]}): ${SDESC[$n]}; reply $(printf %s "$r" | wc -c) B $(grep -o '"allowed":[a-z]*' <<<"$r"); RSS idle $(awk -v k="$(rss_kb "${SPID[$n]}")" 'BEGIN{print k/1024}') MiB"
done
echo "# body $(wc -c <"$WORK/body.json") B; ${DURATION}s per run"
for c in $CONNS; do
  for _ in $(seq 1 "$REPS"); do
    for n in $NAMES; do run "$n" "$c"; done
  done
done
med() { cut -d' ' -f"$2" "$1" 2>/dev/null | sort -g | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
echo "# ratios to nginx (medians of $REPS); load now $(cut -d' ' -f1-3 /proc/loadavg)"
for c in $CONNS; do
  nr=$(med "$WORK/res.nginx.$c" 1) n50=$(med "$WORK/res.nginx.$c" 2) n99=$(med "$WORK/res.nginx.$c" 3) nc=$(med "$WORK/res.nginx.$c" 4)
  for n in $NAMES; do
    [ "$n" = nginx ] && continue
    awk -v n="$n" -v c="$c" -v wr="$(med "$WORK/res.$n.$c" 1)" -v nr="$nr" -v w50="$(med "$WORK/res.$n.$c" 2)" \
        -v n50="$n50" -v w99="$(med "$WORK/res.$n.$c" 3)" -v n99="$n99" -v wc="$(med "$WORK/res.$n.$c" 4)" -v nc="$nc" \
        'BEGIN {
          printf "%-8s -c%-3s throughput %.2fx  p50 %.2fx (%.3f ms)  p99 %.2fx (%.3f ms)  CPU/req %.2fx", n, c,
            wr / nr, w50 / n50, w50, w99 / n99, w99, wc / nc
          # Issue 29: at 32 connections p99 <= 1.5x nginx (or <= 2 ms), throughput >= 0.6x, CPU per request
          # <= 2x; issue 18: at 1, p50 <= 0.2 ms.
          if (c >= 32) printf "  [target p99 %s, throughput %s, CPU/req %s]",
            (w99 <= 1.5 * n99 || w99 <= 2) ? "met" : "missed", (wr >= 0.6 * nr) ? "met" : "missed",
            (wc <= 2 * nc) ? "met" : "missed"
          if (c == 1) printf "  [target p50 %s]", (w50 <= 0.2) ? "met" : "missed"
          printf "\n" }'
  done
done
for n in $NAMES; do
  [ "$n" = nginx ] && continue
  echo "# $n final VmHWM $(awk '/^VmHWM:/ {print $2/1024}' /proc/"${SPID[$n]}"/status) MiB"
done
