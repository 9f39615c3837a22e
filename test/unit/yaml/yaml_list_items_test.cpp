// DocumentStream::read with a ListItemSink hands each item of a `kind: List`
// over as soon as it is parsed, so that a List of a whole cluster's objects
// costs one item's tree at a time. Put back together, the pieces are the
// document parseStream() gives: the same values, source positions and
// warnings. A document that only looks like a List while it is parsed (its
// kind, written after the items, is another; `items` written twice...) is
// parsed again whole, and one that does not parse gives parseStream's error.
#include "yaml/yaml_to_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gpuguard::yaml {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Keeps what it is handed, as a front end that judges items would.
class KeptItems final : public ListItemSink {
 public:
  void item(std::size_t position, Document& item) override { pending.emplace_back(position, std::move(item)); }
  void discard() override {
    pending.clear();
    ++discards;
  }
  std::vector<std::pair<std::size_t, Document>> pending;
  int discards = 0;
};

// One document as parseStream() would give it, rebuilt from a List and its
// items, with how many items were handed over.
struct Rebuilt {
  Document doc;
  std::size_t handedOver = 0;
};

void putBack(Document& list, std::vector<std::pair<std::size_t, Document>>& items) {
  std::vector<SourceMap::Entry> entries = list.sources.entries();
  for (auto& [position, item] : items) {
    const std::string prefix = "/items/" + std::to_string(position);
    EXPECT_TRUE(list.value["items"][position].is_null()) << "the List keeps a null in the item's place";
    list.value["items"][position] = std::move(item.value);
    for (const SourceMap::Entry& e : item.sources.entries()) entries.push_back({prefix + e.pointer, e.origin});
    for (ParseWarning& w : item.warnings) {
      w.pointer = prefix + w.pointer;
      list.warnings.push_back(std::move(w));
    }
    EXPECT_EQ(item.index, list.index);
  }
  list.sources = SourceMap::fromEntries(std::move(entries));
}

struct Streamed {
  std::vector<Rebuilt> documents;
  ParseResult result;
  int discards = 0;
};

Streamed readWithItems(const std::string& text, const Limits& limits = {}) {
  Streamed out;
  KeptItems items;
  const DocumentStream stream(text, limits);
  out.result = stream.read(
      [&](Document& doc) {
        Rebuilt rebuilt{std::move(doc), items.pending.size()};
        EXPECT_EQ(rebuilt.doc.itemsHandedOver, !items.pending.empty());
        if (rebuilt.doc.itemsHandedOver) putBack(rebuilt.doc, items.pending);
        items.pending.clear();
        out.documents.push_back(std::move(rebuilt));
      },
      {}, &items);
  out.discards = items.discards;
  return out;
}

using Origin = std::tuple<std::string, int, int, int, int, std::string, bool>;
using Warning = std::tuple<int, int, std::string, std::string>;

std::vector<Origin> originsOf(const Document& doc) {
  std::vector<Origin> out;
  for (const SourceMap::Entry& e : doc.sources.entries()) {
    out.emplace_back(e.pointer, e.origin.position.line, e.origin.position.column, e.origin.keyPosition.line,
                     e.origin.keyPosition.column, e.origin.writtenText, e.origin.plainScalar);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Warning> warningsOf(const Document& doc) {
  std::vector<Warning> out;
  for (const ParseWarning& w : doc.warnings) out.emplace_back(w.position.line, w.position.column, w.message, w.pointer);
  std::sort(out.begin(), out.end());
  return out;
}

// The stream read with its Lists' items handed over is parseStream's, piece
// for piece; returns how many items each document handed over.
std::vector<std::size_t> expectSameAsWhole(const std::string& text, const Limits& limits = {}) {
  const Streamed streamed = readWithItems(text, limits);
  const ParseResult whole = parseStream(text, limits);
  std::vector<std::size_t> handedOver;
  EXPECT_EQ(streamed.documents.size(), whole.documents.size()) << text;
  for (std::size_t d = 0; d < std::min(streamed.documents.size(), whole.documents.size()); ++d) {
    const Document& mine = streamed.documents[d].doc;
    const Document& theirs = whole.documents[d];
    EXPECT_EQ(mine.value, theirs.value) << text;
    EXPECT_EQ(mine.index, theirs.index);
    EXPECT_EQ(mine.start, theirs.start);
    EXPECT_EQ(originsOf(mine), originsOf(theirs)) << text;
    EXPECT_EQ(warningsOf(mine), warningsOf(theirs)) << text;
    handedOver.push_back(streamed.documents[d].handedOver);
  }
  EXPECT_EQ(streamed.result.errors.size(), whole.errors.size()) << text;
  for (std::size_t e = 0; e < std::min(streamed.result.errors.size(), whole.errors.size()); ++e) {
    EXPECT_EQ(streamed.result.errors[e].position, whole.errors[e].position);
    EXPECT_EQ(streamed.result.errors[e].message, whole.errors[e].message);
  }
  return handedOver;
}

const std::string kPod = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}";

TEST(ListItems, AreHandedOverOneByOneWithPositionsOfTheirOwnEvenWhenKindComesAfterThem) {
  // kubectl writes apiVersion, items, kind, metadata.
  const std::string text = "apiVersion: v1\nitems:\n- " + kPod + "\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
                           "    name: q\n    name: r\n  spec: {}\nkind: List\nmetadata: {resourceVersion: \"\"}\n";
  KeptItems items;
  std::vector<Document> lists;
  DocumentStream(text).read([&](Document& doc) { lists.push_back(std::move(doc)); }, {}, &items);
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_TRUE(lists[0].itemsHandedOver);
  EXPECT_EQ(lists[0].value["items"], nlohmann::json::array({nullptr, nullptr}));
  EXPECT_EQ(lists[0].sources.find("/items/1/kind"), nullptr) << "the List keeps nothing of its items";
  EXPECT_THAT(lists[0].warnings, IsEmpty());
  ASSERT_EQ(items.pending.size(), 2u);
  const Document& second = items.pending[1].second;
  EXPECT_EQ(items.pending[1].first, 1u);
  EXPECT_EQ(second.value["metadata"]["name"], "r");
  EXPECT_EQ(second.sources.locate("/metadata/name").line, 8);
  EXPECT_EQ(second.start, (Position{4, 3}));
  ASSERT_EQ(second.warnings.size(), 1u);
  EXPECT_EQ(second.warnings[0].pointer, "/metadata/name");
  EXPECT_EQ(second.warnings[0].position.line, 8);
  EXPECT_EQ(items.discards, 0);
  EXPECT_THAT(expectSameAsWhole(text), ElementsAre(2u));
}

TEST(ListItems, OfADocumentThatOnlyLookedLikeAListAreDiscardedAndItIsReadWhole) {
  for (const std::string& text : std::vector<std::string>{
           "apiVersion: v1\nitems:\n- " + kPod + "\nkind: Template\n",       // another kind, after the items
           "items:\n- " + kPod + "\n",                                       // no kind at all
           "kind: List\nitems:\n- " + kPod + "\nitems:\n- " + kPod + "\n",   // items written twice
           "kind: List\nitems: [a]\nitems: {a: 1}\n",                       // the second one a map
           "kind: List\nother: &x [b]\nitems: [a]\nitems: *x\n",             // the second one an alias
           "kind: List\nitems: &all [a, b]\ncopy: *all\n",                   // the items aliased
           "base: &b {items: [z]}\nkind: List\nitems: [a]\n<<: *b\n",        // a merge key that replaces them
       }) {
    const Streamed streamed = readWithItems(text);
    EXPECT_EQ(streamed.discards, 1) << text;
    EXPECT_THAT(expectSameAsWhole(text), ElementsAre(0u)) << text;
  }
}

TEST(ListItems, OnlyTheListsOwnItemsAreHandedOverNotItemsNestedInThem) {
  // A List of Lists, and a ConfigMap volume's items inside a pod.
  const std::string inner = "{apiVersion: v1, kind: List, items: [" + kPod + ", " + kPod + "]}";
  const std::string text = "apiVersion: v1\nkind: List\nitems:\n- " + inner + "\n- " + inner +
                           "\n- apiVersion: v1\n  kind: Pod\n  spec:\n    volumes:\n    - configMap:\n"
                           "        items:\n        - {key: a, path: a}\n";
  const Streamed streamed = readWithItems(text);
  ASSERT_EQ(streamed.documents.size(), 1u);
  EXPECT_EQ(streamed.documents[0].doc.value["items"][0]["items"].size(), 2u);
  EXPECT_THAT(expectSameAsWhole(text), ElementsAre(3u));
}

TEST(ListItems, MalformedItemsAreHandedOverAsWritten) {
  // Scalars, nulls, sequences, aliases of an earlier item and of an anchor
  // inside one, flow and block items side by side.
  const std::string text = "kind: List\napiVersion: v1\nitems:\n- 3\n-\n- [a, b]\n- &p " + kPod +
                           "\n- *p\n- ~\n- {name: &n x}\n- *n\n- \"quoted\"\n";
  EXPECT_THAT(expectSameAsWhole(text), ElementsAre(9u));
  // An empty List hands nothing over.
  EXPECT_THAT(expectSameAsWhole("kind: List\nitems: []\n"), ElementsAre(0u));
}

TEST(ListItems, AParseErrorInTheMiddleOfAListDiscardsItsItemsAndSaysWhere) {
  const std::string text = "kind: List\nitems:\n- " + kPod + "\n- " + kPod + "\n- {name: [\n---\nkind: List\nitems:\n- " +
                           kPod + "\n";
  const Streamed streamed = readWithItems(text);
  EXPECT_EQ(streamed.discards, 1);
  ASSERT_EQ(streamed.result.errors.size(), 1u);
  EXPECT_EQ(streamed.result.errors[0].position.line, 5);
  // The next document is still read, its item handed over.
  EXPECT_THAT(expectSameAsWhole(text), ElementsAre(1u));
  // An alias bomb in an item fails as it does whole.
  std::string bomb = "kind: List\nitems:\n- a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'h'; ++c) {
    bomb += "  " + std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 10; ++k) bomb += std::string(k ? ", *" : "*") + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  EXPECT_THAT(expectSameAsWhole(bomb), IsEmpty());
}

// The YAML fast path hands a List's events over in chunks as it scans it;
// when it bails out late (here at an anchor in the last item), the items it
// handed over are discarded and yaml-cpp reads the List from its start.
TEST(ListItems, AFastPathBailOutLateInALongListDiscardsWhatWasHandedOverAndReadsItAgain) {
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 300; ++i)
    text += "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p" + std::to_string(i) + "\n    name: dup\n";
  text += "- kind: Pod\n  metadata: {name: &n last}\n  spec: {hostname: *n}\n";
  const Streamed streamed = readWithItems(text);
  EXPECT_EQ(streamed.discards, 1);
  ASSERT_EQ(streamed.documents.size(), 1u);
  const Document& list = streamed.documents[0].doc;
  EXPECT_EQ(list.value["items"][300]["spec"]["hostname"], "last");
  EXPECT_EQ(list.warnings.size(), 300u) << "each duplicate key warned once";
  EXPECT_THAT(expectSameAsWhole(text), ElementsAre(301u));
}

TEST(ListItems, OfAJsonListTooKindAfterItemsOrNot) {
  const std::string pod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "name": "q"}})";
  const std::string list = R"({"apiVersion": "v1", "items": [)" + pod + ",\n" + pod + R"(], "kind": "List"})";
  EXPECT_THAT(expectSameAsWhole(list + "\n" + list), ElementsAre(2u, 2u));
  const std::string notList = R"({"apiVersion": "v1", "items": [)" + pod + R"(], "kind": "Template"})";
  const std::string twice = R"({"kind": "List", "items": [1], "items": [2]})";
  EXPECT_THAT(expectSameAsWhole(notList + "\n" + twice + "\n" + list), ElementsAre(0u, 0u, 2u));
  // A syntax error inside a List after two JSON objects (kubectl no longer
  // turns to YAML) stops the stream there, as it does whole.
  const std::string broken = list + "\n" + list + "\n" + R"({"kind": "List", "items": [)" + pod + ",\n{\"a\": tru}]}";
  const Streamed streamed = readWithItems(broken);
  EXPECT_EQ(streamed.discards, 1);
  ASSERT_EQ(streamed.result.errors.size(), 1u);
  EXPECT_EQ(streamed.result.errors[0].position.line, 6);
  expectSameAsWhole(broken);
  // After one, the rest is read as YAML (`tru` a string), its items handed over too.
  EXPECT_THAT(expectSameAsWhole(list + "\n" + R"({"kind": "List", "items": [)" + pod + ",\n{\"a\": tru}]}"),
              ElementsAre(2u, 2u));
}

TEST(ListItems, AreNotHandedOverWithoutADocumentSinkOrFromATextReadWhole) {
  const std::string text = "kind: List\nitems: [a, b]\n";
  KeptItems items;
  const ParseResult kept = DocumentStream(text).read({}, {}, &items);
  EXPECT_THAT(items.pending, IsEmpty());
  ASSERT_EQ(kept.documents.size(), 1u);
  EXPECT_EQ(kept.documents[0].value["items"], nlohmann::json::array({"a", "b"}));
  // CR-only line breaks: read whole before anything is handed over.
  Limits kubectl;
  kubectl.onlyWhatKubectlReads = true;
  std::vector<Document> seen;
  DocumentStream("kind: List\ritems: [a, b]\r", kubectl).read([&](Document& d) { seen.push_back(std::move(d)); }, {}, &items);
  EXPECT_THAT(items.pending, IsEmpty());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].itemsHandedOver);
}

}  // namespace
}  // namespace gpuguard::yaml
