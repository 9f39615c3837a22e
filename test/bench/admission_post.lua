-- wrk script for load_vs_nginx.sh: POSTs one AdmissionReview (the file named by
-- $GPUGUARD_BENCH_BODY) to /validate on keep-alive connections and prints one
-- machine-readable RESULT line.
local f = assert(io.open(os.getenv("GPUGUARD_BENCH_BODY"), "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.path = "/validate?timeout=10s"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, */*"

done = function(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d rps=%.1f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f errors=%d non2xx=%d\n",
    summary.requests, summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
