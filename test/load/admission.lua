-- wrk script: POSTs one real AdmissionReview (the body file named by
-- $GPUGUARD_LOAD_BODY) to /validate on keep-alive connections, and prints a
-- machine-readable summary with p50/p99/p99.9 and every error class
-- (non-2xx replies are wrk's "status" errors).
local path = os.getenv("GPUGUARD_LOAD_BODY")
local f = assert(io.open(path, "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.path = "/validate?timeout=10s"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, */*"
if os.getenv("GPUGUARD_LOAD_CLOSE") == "1" then
  -- one TLS handshake per request (exercises certificate rotation)
  wrk.headers["Connection"] = "close"
end

done = function(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d duration_s=%.2f rps=%.1f bytes=%d p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f " ..
    "connect_errors=%d read_errors=%d write_errors=%d status_errors=%d timeouts=%d\n",
    summary.requests, secs, summary.requests / secs, summary.bytes,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
    latency.max / 1000, e.connect, e.read, e.write, e.status, e.timeout))
end
