// How /mutate and /validate grow with the number of containers of a pod:
// the wall and CPU time of webhook::mutate and webhook::review for a GPU Pod
// of N and 4N containers that ask for their GPU in requests only (each
// container gets a limit, the pod a toleration: N + 1 patch operations), and
// the ratio 4N / N (linear: ~4, quadratic: ~16).
//
//   cmake --build build --target gpuguard-mutate-scaling
//   build/test/gpuguard-mutate-scaling [N]        # default N = 1000
//
// Issue 23's "before" (the red team's machine): /mutate of 1,000 / 2,000 /
// 4,000 containers 1.3 / 5.2 / 24 s. docs/reliability.md has the "after".
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "webhook/admission.h"

namespace {

using nlohmann::json;
using gpuguard::webhook::AdmissionPolicy;
using gpuguard::webhook::AdmissionResult;

std::string widePodReview(std::size_t n) {
  json containers = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    containers.push_back({{"name", "c" + std::to_string(i)},
                          {"image", "nvidia/cuda:12.4.1-base-ubuntu22.04"},
                          {"resources", {{"requests", {{"nvidia.com/gpu", 1}}}}}});
  }
  const json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"name", "wide"}, {"namespace", "ml"}}},
                    {"spec", {{"containers", containers}}}};
  const json request = {{"uid", "u"},
                        {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                        {"namespace", "ml"},
                        {"operation", "CREATE"},
                        {"object", pod}};
  return json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}}.dump();
}

double seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = 0, cpu = 0;
  std::size_t patchOperations = 0;
};

// The best of three runs after a warm-up one (the first run pays for
// page faults and cold caches).
template <typename Review>
Timing timeOf(Review review, const std::string& body) {
  static const AdmissionPolicy policy;
  Timing best;
  for (int run = 0; run < 4; ++run) {
    const double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_THREAD_CPUTIME_ID);
    const AdmissionResult r = review(body, policy, {});
    const double wallTaken = seconds(CLOCK_MONOTONIC) - wall, cpuTaken = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
    if (r.httpStatus != 200) std::fprintf(stderr, "unexpected status %d\n", r.httpStatus);
    if (run == 1 || (run > 1 && cpuTaken < best.cpu)) best = {wallTaken, cpuTaken, r.patchOperations};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
  std::printf("%-9s %10s %12s %12s %10s\n", "endpoint", "containers", "wall s", "cpu s", "patch ops");
  double cpuOf[2][2] = {};
  for (int e = 0; e < 2; ++e) {
    for (int k = 0; k < 2; ++k) {
      const std::size_t containers = k == 0 ? n : 4 * n;
      const std::string body = widePodReview(containers);
      const Timing t = e == 0 ? timeOf(gpuguard::webhook::mutate, body) : timeOf(gpuguard::webhook::review, body);
      cpuOf[e][k] = t.cpu;
      std::printf("%-9s %10zu %12.4f %12.4f %10zu\n", e == 0 ? "/mutate" : "/validate", containers, t.wall, t.cpu,
                  t.patchOperations);
    }
  }
  std::printf("growth 4N/N (cpu): /mutate %.2fx, /validate %.2fx (linear ~4, quadratic ~16)\n",
              cpuOf[0][1] / cpuOf[0][0], cpuOf[1][1] / cpuOf[1][0]);
  return 0;
}
