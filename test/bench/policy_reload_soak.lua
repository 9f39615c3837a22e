-- wrk script for policy_reload_soak.sh: POSTs one AdmissionReview to
-- /validate and counts the replies that are not "allowed": under the policy
-- the soak rewrites in place, every reply must allow the pod.
local path = os.getenv("SOAK_BODY")
local f = assert(io.open(path, "rb"))
local body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.path = "/validate?timeout=10s"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local threads = {}
setup = function(thread)
  thread:set("wrong", 0)
  table.insert(threads, thread)
end

wrong = 0
response = function(status, headers, body)
  if status ~= 200 or not body:find('"allowed":true', 1, true) then wrong = wrong + 1 end
end

done = function(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("wrong") end
  io.write(string.format("RESULT requests=%d wrong=%d duration_s=%.1f non2xx=%d read_errors=%d timeouts=%d\n",
    summary.requests, total, summary.duration / 1e6, summary.errors.status, summary.errors.read, summary.errors.timeout))
end
