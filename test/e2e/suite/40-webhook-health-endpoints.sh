# shellcheck shell=bash
# ---- webhook health endpoints --------------------------------------------------------
case_begin "webhook serves /healthz, /readyz and /metrics over TLS"
for ep in healthz readyz metrics; do
    code=$(curl -sS -o "$E2E_WORK/ep-$ep.out" -w '%{http_code}' --max-time 5 --cacert "$WH/ca.crt" \
        "https://127.0.0.1:$WH_PORT/$ep" 2>&1)
    [[ $code == 200 ]] || problem "GET /$ep -> $code"
done
[[ -s $E2E_WORK/ep-metrics.out ]] || problem "empty /metrics"
case_end
