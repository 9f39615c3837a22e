// DocumentStream reads a stream one document at a time, so that a front end
// can judge each document and let it go before the next is parsed (the
// linter's memory stays near the input's size), and can first read only
// the few documents that matter to the others.
#include "yaml/yaml_to_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace gpuguard::yaml {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// What a sink saw: each document's index and its `name`.
struct Seen {
  std::vector<std::size_t> indexes;
  std::vector<std::string> names;
};

Seen readAll(const DocumentStream& stream, ParseResult& result, const DocumentFilter& wanted = {}) {
  Seen seen;
  result = stream.read(
      [&seen](Document& doc) {
        seen.indexes.push_back(doc.index);
        seen.names.push_back(doc.value.is_object() ? doc.value.value("name", "") : "");
      },
      wanted);
  return seen;
}

TEST(DocumentStream, HandsOverEachDocumentInStreamOrderWithTheStreamsNumbering) {
  const std::string text = "name: a\n---\nname: [\n---\nname: c\n";
  const DocumentStream stream(text);
  ParseResult result;
  const Seen seen = readAll(stream, result);
  // The section that did not parse keeps its number: the documents after it are numbered as parseStream numbers them.
  EXPECT_THAT(seen.indexes, ElementsAre(0u, 2u));
  EXPECT_THAT(seen.names, ElementsAre("a", "c"));
  EXPECT_THAT(result.documents, IsEmpty());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].position.line, 3);
  // Read again, without a sink: what parseStream gives.
  const ParseResult whole = stream.read();
  ASSERT_EQ(whole.documents.size(), 2u);
  EXPECT_EQ(whole.documents[1].index, 2u);
  EXPECT_EQ(whole.errors.size(), 1u);
}

TEST(DocumentStream, AFilterSkipsTheSectionsItRefusesUnparsed) {
  const std::string text = "name: a\nkind: Pod\n---\nname: b\nkind: DeviceClass\n---\nname: [\nkind: Pod\n";
  const DocumentStream stream(text);
  ParseResult result;
  const Seen seen = readAll(stream, result, [](std::string_view section) {
    return section.find("DeviceClass") != std::string_view::npos;
  });
  EXPECT_THAT(seen.names, ElementsAre("b"));
  EXPECT_THAT(seen.indexes, ElementsAre(1u));
  // The broken section was not wanted, so not parsed: no error either.
  EXPECT_THAT(result.errors, IsEmpty());
}

TEST(DocumentStream, OneSectionIsASingleDocumentAndAJsonStreamIsNot) {
  EXPECT_TRUE(DocumentStream("name: a\n").singleDocument());
  EXPECT_TRUE(DocumentStream("# only a comment\n").singleDocument());
  EXPECT_FALSE(DocumentStream("name: a\n---\nname: b\n").singleDocument());
  EXPECT_FALSE(DocumentStream("{\"name\": \"a\"}").singleDocument());
}

TEST(DocumentStream, AJsonStreamIsHandedOverValueByValueAndStopsAtItsError) {
  const std::string text = "{\"name\": \"a\"}\n{\"name\": \"b\"}\n{\"name\": tru}\n{\"name\": \"d\"}\n";
  const DocumentStream stream(text);
  ParseResult result;
  const Seen seen = readAll(stream, result);
  EXPECT_THAT(seen.names, ElementsAre("a", "b"));
  EXPECT_THAT(seen.indexes, ElementsAre(0u, 1u));
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].position.line, 3);
}

TEST(DocumentStream, AJsonStreamsFilterIsAskedOnceOfTheWholeStream) {
  // Its values do not stand alone (the stream stops at its first error),
  // so they are read all or none.
  const std::string text = "{\"name\": \"a\"}\n{\"name\": \"b\", \"kind\": \"DeviceClass\"}\n";
  const DocumentStream stream(text);
  std::vector<std::size_t> asked;
  ParseResult result;
  const Seen seen = readAll(stream, result, [&asked](std::string_view whole) {
    asked.push_back(whole.size());
    return whole.find("DeviceClass") != std::string_view::npos;
  });
  EXPECT_THAT(asked, ElementsAre(text.size()));
  EXPECT_THAT(seen.names, ElementsAre("a", "b"));
  const Seen none = readAll(stream, result, [](std::string_view) { return false; });
  EXPECT_THAT(none.names, IsEmpty());
}

TEST(DocumentStream, ACrOnlyTextIsHandedOverWholeWithKubectlsWarningOnTheDocumentItReads) {
  Limits limits;
  limits.onlyWhatKubectlReads = true;
  const std::string text = "name: a\r---\rname: b\r";
  const DocumentStream stream(text, limits);
  std::vector<std::size_t> warnings;
  const ParseResult result = stream.read([&warnings](Document& doc) { warnings.push_back(doc.warnings.size()); });
  // kubectl reads the first document only, and the warning says so on it.
  EXPECT_THAT(warnings, ElementsAre(1u));
  EXPECT_THAT(result.documents, IsEmpty());
}

TEST(DocumentStream, WhatTheSinkThrowsIsThrownOnNotTakenForAParseError) {
  const DocumentStream stream("name: a\n---\nname: b\n");
  EXPECT_THROW(stream.read([](Document&) { throw std::runtime_error("judging failed"); }), std::runtime_error);
  const DocumentStream json("{\"name\": \"a\"}");
  EXPECT_THROW(json.read([](Document&) { throw std::runtime_error("judging failed"); }), std::runtime_error);
}

TEST(DocumentStream, AnInputOverTheSizeLimitIsRefusedWholeAsParseStreamRefusesIt) {
  Limits limits;
  limits.maxDocumentBytes = 8;
  const DocumentStream stream("name: a long one\n", limits);
  ParseResult result;
  const Seen seen = readAll(stream, result);
  EXPECT_THAT(seen.names, IsEmpty());
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->message, parseStream("name: a long one\n", limits).error->message);
  EXPECT_FALSE(stream.singleDocument());
}

}  // namespace
}  // namespace gpuguard::yaml
