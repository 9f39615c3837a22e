// How long the client of a request waits for its answer, from the request's
// URL. kube-apiserver calls a webhook through client-go's REST client with
// Request.Timeout(timeoutSeconds) (k8s.io/apiserver, the validating and
// mutating dispatchers; newer versions pass what is left of the request's own
// deadline when that is shorter), and client-go writes it into the URL as
// the query parameter `timeout`, with Go's time.Duration.String():
// "/validate?timeout=10s", "?timeout=9.873s", "?timeout=1m0s". The
// AdmissionReview itself does not carry it.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace gpuguard::webhook {

// Go's time.ParseDuration for non-negative durations: one or more decimal
// numbers, each with a unit (ns, us, µs, ms, s, m, h), "1h2m3.5s". Nullopt
// for anything else (a sign, a bare number, an unknown unit, overflow).
std::optional<std::chrono::nanoseconds> parseGoDuration(std::string_view text);

// The `timeout` query parameter of a request target ("/validate?timeout=10s"),
// when present and a duration above zero; nullopt otherwise.
std::optional<std::chrono::nanoseconds> timeoutParameter(std::string_view target);

}  // namespace gpuguard::webhook
