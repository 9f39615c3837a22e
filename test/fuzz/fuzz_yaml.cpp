// yaml::parseStream on arbitrary bytes, then the rule engine on every
// document with the loader's source hints, as gpuguard-lint does. Invariants:
//  * never crashes or throws; an error, if any, has a position or is at 0;
//  * documents are numbered in stream order (a section that failed to parse
//    keeps its number, so numbers may skip);
//  * every finding's JSON pointer is well formed and locates to a real
//    position (line >= 1) in a document that has any source entries;
//  * every source-map entry is found again by its own pointer.
#include <string>
#include <string_view>

#include "rules/engine.h"
#include "rules/rule.h"
#include "test/fuzz/fuzz_common.h"
#include "yaml/yaml_to_json.h"

namespace {

class Hints final : public gpuguard::SourceHints {
 public:
  explicit Hints(const gpuguard::yaml::SourceMap& s) : s_(s) {}
  const std::string* writtenText(std::string_view pointer) const override {
    const auto* o = s_.find(pointer);
    return o && o->plainScalar ? &o->writtenText : nullptr;
  }

 private:
  const gpuguard::yaml::SourceMap& s_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuguard::yaml::Limits limits;
  limits.maxNodes = 200'000;  // keep alias bombs cheap under ASan
  const gpuguard::yaml::ParseResult parsed = gpuguard::yaml::parseStream(text, limits);

  static const gpuguard::Policy policy;

  std::size_t nextIndex = 0;
  for (const auto& doc : parsed.documents) {
    FUZZ_CHECK(doc.index >= nextIndex);
    nextIndex = doc.index + 1;
    for (const auto& e : doc.sources.entries()) {
      FUZZ_CHECK(e.pointer.empty() || e.pointer[0] == '/');
      FUZZ_CHECK(doc.sources.find(e.pointer) != nullptr);
    }
    const Hints hints(doc.sources);
    const auto findings = gpuguard::judge(doc.value, policy, gpuguard::JudgeOptions{&hints});
    for (const auto& f : findings) {
      FUZZ_CHECK(!f.rule.empty());
      const std::string pointer = f.pointer();
      FUZZ_CHECK(pointer.empty() || pointer[0] == '/');
      const auto pos = doc.sources.locate(pointer);
      if (!doc.sources.empty()) {
        if (pos.line < 1) std::fprintf(stderr, "finding %s at \"%s\" does not locate\n", f.rule.c_str(), pointer.c_str());
        FUZZ_CHECK(pos.line >= 1 && pos.column >= 1);
      }
    }
    (void)doc.value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (parsed.error) {
    FUZZ_CHECK(parsed.error->position.line >= 0 && parsed.error->position.column >= 0);
  }
  return 0;
}
