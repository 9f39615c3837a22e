#!/usr/bin/env bash
# /metrics of a running gpuguard-webhook carries what operators expect: the process_*
# series (checked against /proc of the same process), gpuguard_build_info{version} with the
# project version, and gpuguard_serving_certificate_expiration_timestamp_seconds equal to
# the served certificate's notAfter, also after the certificate is renewed on disk; the
# exposition parses (every sample has a TYPE, names and values are well-formed).
#
#   test/ship/metrics_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=metrics
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
WEBHOOK=$(find_binary "$BUILD" gpuguard-webhook)
[[ -n $WEBHOOK ]] || { skip "no gpuguard-webhook in $BUILD"; finish; }
for tool in openssl curl python3; do command -v $tool >/dev/null || { skip "$tool not installed"; finish; }; done
version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")

# A CA and a serving certificate for localhost, valid DAYS days, into DIR (renamed into place).
issue() { # issue DIR DAYS
  local dir=$1 days=$2
  mkdir -p "$dir.new"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir.new/tls.key" \
    -subj /CN=localhost -out "$SHIP_TMP/leaf.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$SHIP_TMP/ext"
  openssl x509 -req -in "$SHIP_TMP/leaf.csr" -CA "$SHIP_TMP/ca.crt" -CAkey "$SHIP_TMP/ca.key" -set_serial "$RANDOM$RANDOM" \
    -days "$days" -extfile "$SHIP_TMP/ext" -out "$dir.new/tls.crt" 2>/dev/null
  rm -rf "$dir.old"; [[ -d $dir ]] && mv "$dir" "$dir.old"
  mv "$dir.new" "$dir"
}
not_after() { date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$SHIP_TMP/ca.key" -out "$SHIP_TMP/ca.crt" \
  -subj /CN=metrics-test-ca -days 400 2>/dev/null
TLS=$SHIP_TMP/tls
issue "$TLS" 40

started=$(date +%s)
if ! start_webhook "$WEBHOOK" "$SHIP_TMP/webhook.log" --tls-cert-file="$TLS/tls.crt" --tls-private-key-file="$TLS/tls.key" \
  --tls-reload-interval=200ms; then
  fail "gpuguard-webhook does not start: $(tail -n 5 "$SHIP_TMP/webhook.log")"
  finish
fi
trap 'stop_webhook; rm -rf "$SHIP_TMP"' EXIT
scrape() { curl -sf --cacert "$SHIP_TMP/ca.crt" "https://localhost:$WEBHOOK_PORT/metrics" >"$SHIP_TMP/metrics.txt"; }
value() { sed -n "s/^$1 \([^ ]*\)$/\1/p" "$SHIP_TMP/metrics.txt"; }

check "GET /metrics over HTTPS" scrape
"$(python_with re)" - "$SHIP_TMP/metrics.txt" >"$SHIP_TMP/format.log" 2>&1 <<'PYEOF'
import re, sys
typed, bad = {}, []
name_re = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
sample = re.compile(rf'^({name_re})(\{{({name_re}="(\\.|[^"\\])*"(,{name_re}="(\\.|[^"\\])*")*)?\}})? (\S+)$')
for line in open(sys.argv[1]).read().splitlines():
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split(" ", 3)
        typed[name] = kind
        continue
    if line.startswith("#") or not line:
        continue
    m = sample.match(line)
    if not m:
        bad.append(f"malformed: {line}"); continue
    name, value = m.group(1), m.group(7)
    try:
        float(value)
    except ValueError:
        bad.append(f"value: {line}")
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    if name not in typed and base not in typed:
        bad.append(f"no TYPE: {name}")
print("ok - the exposition parses: every sample well-formed and typed" if not bad else "FAIL - " + "; ".join(bad[:5]))
PYEOF
report_lines "" "$SHIP_TMP/format.log"

pid=$WEBHOOK_PID
for name in process_resident_memory_bytes process_cpu_seconds_total process_open_fds process_start_time_seconds \
  process_max_fds process_virtual_memory_bytes; do
  check "$name is there ($(value "$name"))" test -n "$(value "$name")"
done
check "process_cpu_seconds_total is a counter" grep -qx "# TYPE process_cpu_seconds_total counter" "$SHIP_TMP/metrics.txt"
in_range() { python3 -c 'import sys; v, lo, hi = map(float, sys.argv[1:]); sys.exit(0 if lo <= v <= hi else 1)' "$@"; }
rss_kib=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
check "process_resident_memory_bytes is the process's VmRSS ($(value process_resident_memory_bytes) vs ${rss_kib} KiB, within 50%)" \
  in_range "$(value process_resident_memory_bytes)" $((rss_kib * 512)) $((rss_kib * 1536))
fds=$(ls "/proc/$pid/fd" | wc -l)
check "process_open_fds is the process's open descriptors ($(value process_open_fds) vs $fds, within 4)" \
  in_range "$(value process_open_fds)" $((fds - 4)) $((fds + 4))
check "process_start_time_seconds is when it started ($(value process_start_time_seconds) vs $started, within 5 s)" \
  in_range "$(value process_start_time_seconds)" $((started - 5)) $((started + 5))
check "process_max_fds is the soft RLIMIT_NOFILE ($(value process_max_fds) vs $(awk '/^Max open files/ {print $4}' "/proc/$pid/limits"))" \
  test "$(value process_max_fds)" = "$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits")"
# Some CPU, by sending it work: a few hundred scrapes.
for _ in $(seq 200); do curl -sf --cacert "$SHIP_TMP/ca.crt" "https://localhost:$WEBHOOK_PORT/metrics" -o /dev/null; done
before=$(value process_cpu_seconds_total)
scrape
utime_stime=$(awk '{print $14 + $15}' "/proc/$pid/stat")
check "process_cpu_seconds_total follows /proc/PID/stat utime+stime ($(value process_cpu_seconds_total) s vs $utime_stime ticks)" \
  in_range "$(value process_cpu_seconds_total)" "$(python3 -c "print($utime_stime / $(getconf CLK_TCK) - 0.5)")" "$(python3 -c "print($utime_stime / $(getconf CLK_TCK) + 0.01)")"
check "process_cpu_seconds_total does not go down ($before -> $(value process_cpu_seconds_total))" \
  in_range "$(value process_cpu_seconds_total)" "$before" 1e9

check "gpuguard_build_info{version=\"$version\"} 1" grep -qx "gpuguard_build_info{version=\"$version\"} 1" "$SHIP_TMP/metrics.txt"

cert_metric=gpuguard_serving_certificate_expiration_timestamp_seconds
first=$(not_after "$TLS/tls.crt")
check "$cert_metric is the served certificate's notAfter ($(value $cert_metric) vs $first)" test "$(value $cert_metric)" = "$first"
check "$cert_metric is a gauge" grep -qx "# TYPE $cert_metric gauge" "$SHIP_TMP/metrics.txt"

# Renew on disk (a directory swap, as a Secret volume does); the metric follows the reload.
sleep 1.1   # a notAfter one second later at least
issue "$TLS" 90
second=$(not_after "$TLS/tls.crt")
for _ in $(seq 50); do
  scrape
  [[ $(value $cert_metric) == "$second" ]] && break
  sleep 0.2
done
check "after renewal $cert_metric is the new notAfter ($(value $cert_metric) vs $second, was $first)" test "$(value $cert_metric)" = "$second"
check "gpuguard_certificate_reloads_total{result=\"success\"} counts the reload" \
  grep -qx 'gpuguard_certificate_reloads_total{result="success"} [1-9][0-9]*' "$SHIP_TMP/metrics.txt"
# A broken file keeps the old certificate, and the metric with it.
printf 'not a certificate\n' >"$TLS/tls.crt"
for _ in $(seq 50); do
  scrape
  grep -qx 'gpuguard_certificate_reloads_total{result="failure"} [1-9][0-9]*' "$SHIP_TMP/metrics.txt" && break
  sleep 0.2
done
check "a certificate that does not load is counted as a failed reload" \
  grep -qx 'gpuguard_certificate_reloads_total{result="failure"} [1-9][0-9]*' "$SHIP_TMP/metrics.txt"
check "... and $cert_metric still describes the certificate served" test "$(value $cert_metric)" = "$second"

finish
