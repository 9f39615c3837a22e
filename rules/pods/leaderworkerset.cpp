// LeaderWorkerSet: leaderWorkerTemplate.size pods run one replica.
#include "rules/pods/walker.h"

#include <cstdint>

namespace gpuguard::pods {

using nlohmann::json;

// LeaderWorkerSet spec.leaderWorkerTemplate.size: pods per group, leader
// included (the API defaults it to 1).
std::optional<long long> Walker::lwsGroupSize(const json& lws) {
  auto spec = lws.find("spec");
  if (spec == lws.end() || !spec->is_object()) return std::nullopt;
  auto tmpl = spec->find("leaderWorkerTemplate");
  if (tmpl == spec->end() || !tmpl->is_object()) return std::nullopt;
  auto size = tmpl->find("size");
  if (size == tmpl->end()) return 1;
  if (size->is_number_integer() && size->get<std::int64_t>() > 0) return size->get<std::int64_t>();
  return std::nullopt;
}

}  // namespace gpuguard::pods
