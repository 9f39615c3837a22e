// The rule engine on arbitrary JSON (any shape: wrong types everywhere,
// huge numbers, strings where maps belong). Invariants: judge never crashes
// or throws, is deterministic, findings name a rule and a well-formed
// pointer, and a policy with every rule off finds nothing.
#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/engine.h"
#include "test/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 1024 * 1024) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (gpuguard::fuzz::jsonShapeCost(text) > 4096) return 0;  // work grows with the shape, not the bytes
  if (gpuguard::fuzz::jsonNesting(text) > 100) return 0;  // the webhook refuses deeper input (400)
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return 0;

  static const gpuguard::Policy suppressing;  // the defaults (the engine always marks suppressions)
  static const gpuguard::Policy strict = [] {
    gpuguard::Policy p;
    p.assumeExtendedResourceToleration = true;
    p.maxGpusPerNode = 1;
    p.gpuResources.push_back("*");
    return p;
  }();
  static const gpuguard::Policy off = [] {
    gpuguard::Policy p;
    p.rules["*"] = gpuguard::RuleSetting::Off;
    return p;
  }();

  const auto a = gpuguard::judge(object, suppressing);
  const auto b = gpuguard::judge(object, suppressing);
  FUZZ_CHECK(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    FUZZ_CHECK(a[i].rule == b[i].rule && a[i].pointer() == b[i].pointer() && a[i].message() == b[i].message());
    FUZZ_CHECK(!a[i].rule.empty());
    FUZZ_CHECK(a[i].pointer().empty() || a[i].pointer()[0] == '/');
  }
  (void)gpuguard::hasErrors(a);
  (void)gpuguard::judge(object, strict);
  FUZZ_CHECK(gpuguard::judge(object, off).empty());
  return 0;
}
