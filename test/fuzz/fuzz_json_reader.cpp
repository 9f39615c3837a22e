// webhook::readJson against nlohmann::json::parse on arbitrary bytes. The
// reader must accept exactly what nlohmann accepts and build the same tree
// (same types, same values), and its pruning must drop exactly the chosen
// members while still rejecting malformed text inside them. Invariants:
//  * never crashes, throws or reads out of bounds;
//  * readJson(text) succeeds  <=>  nlohmann::json::parse(text) succeeds
//    (unless the text nests deeper than the reader's limit: then the reader
//    says so, and the text really does nest that deep);
//  * on success the trees are identical (fuzz::sameJson);
//  * with a member filter, the result is accepted iff it is without one, and
//    equals nlohmann's tree pruned by the same filter;
//  * a failure carries a message naming the byte, inside the input;
//  * read into a tree that holds another document, the tree is the same as
//    read into an empty one.
#include <string_view>

#include <nlohmann/json.hpp>

#include "test/fuzz/fuzz_common.h"
#include "test/fuzz/same_json.h"
#include "webhook/json_reader.h"

namespace {

using nlohmann::json;
using gpuguard::webhook::JsonContext;
using gpuguard::webhook::kDropMember;
using gpuguard::webhook::kKeepAll;

constexpr std::size_t kMaxDepth = 512;
constexpr JsonContext kPruning = 1;

// A filter that exercises every branch: members whose key starts with 'x' are
// dropped, under 'k' nothing more is pruned, elsewhere pruning goes on.
JsonContext fuzzFilter(JsonContext, std::string_view key) {
  if (!key.empty() && key.front() == 'x') return kDropMember;
  if (!key.empty() && key.front() == 'k') return kKeepAll;
  return kPruning;
}

// The same filter applied to a finished tree (array elements are not pruned).
void pruneLikeTheFilter(json& value, JsonContext context) {
  if (context == kKeepAll || !value.is_object()) return;
  for (auto it = value.begin(); it != value.end();) {
    const JsonContext child = fuzzFilter(context, it.key());
    if (child == kDropMember) {
      it = value.erase(it);
    } else {
      pruneLikeTheFilter(*it, child);
      ++it;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json expected = json::parse(text.begin(), text.end(), nullptr, false);
  const bool nlohmannAccepts = !expected.is_discarded();

  json plain;
  gpuguard::webhook::JsonReadError error;
  const bool accepted = gpuguard::webhook::readJson(text, plain, error, {kMaxDepth, nullptr, kKeepAll});
  if (!accepted) {
    FUZZ_CHECK(!error.message.empty());
    FUZZ_CHECK(error.byte <= size);
    if (error.tooDeep) {
      FUZZ_CHECK(gpuguard::fuzz::jsonNesting(text) > kMaxDepth);
      return 0;
    }
    FUZZ_CHECK(error.message.find("parse error at byte ") == 0);
  }
  if (accepted != nlohmannAccepts) {
    std::fprintf(stderr, "reader %s, nlohmann %s: %s\n", accepted ? "accepts" : "rejects",
                 nlohmannAccepts ? "accepts" : "rejects", accepted ? "" : error.message.c_str());
  }
  FUZZ_CHECK(accepted == nlohmannAccepts);
  if (!accepted) return 0;
  FUZZ_CHECK(gpuguard::fuzz::sameJson(plain, expected));

  // Read into the whole tree just read: the reader reuses what a tree holds,
  // and must leave exactly the pruned tree, as if it had started empty.
  json& pruned = plain;
  gpuguard::webhook::JsonReadError prunedError;
  const bool prunedAccepted =
      gpuguard::webhook::readJson(text, pruned, prunedError, {kMaxDepth, fuzzFilter, kPruning});
  FUZZ_CHECK(prunedAccepted);
  pruneLikeTheFilter(expected, kPruning);
  FUZZ_CHECK(gpuguard::fuzz::sameJson(pruned, expected));

  // And the other way: the whole tree read into the pruned one.
  const json whole = json::parse(text.begin(), text.end(), nullptr, false);
  FUZZ_CHECK(gpuguard::webhook::readJson(text, pruned, prunedError, {kMaxDepth, nullptr, kKeepAll}));
  FUZZ_CHECK(gpuguard::fuzz::sameJson(pruned, whole));
  return 0;
}
