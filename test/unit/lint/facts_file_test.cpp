// gpuguard-lint --facts FILE / --nodes FILE (lint/facts_file.h): every
// object of the file counts, however the file holds them — kubectl's List,
// one object, or YAML documents joined with --- (each an object or a List).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "lint/facts_file.h"

namespace gpuguard::lint {
namespace {

std::string node(const std::string& name) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {nvidia.com/gpu.present: \"true\"}\n"
         "status:\n  capacity: {nvidia.com/gpu: \"8\"}\n  allocatable: {nvidia.com/gpu: \"8\"}\n";
}

// Writes `text` to a file of its own; removed with the object.
struct SnapshotFile {
  explicit SnapshotFile(const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             ("gpuguard-facts-file-test-" + std::to_string(::getpid()) + "-" + std::to_string(++count) + ".yaml")) {
    std::ofstream(path) << text;
  }
  ~SnapshotFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
  static inline int count = 0;
};

std::size_t nodesIn(const std::string& text) {
  const SnapshotFile file(text);
  std::ostringstream err;
  const auto facts = loadFactsFile(file.path.string(), err);
  EXPECT_TRUE(facts) << err.str();
  return facts ? facts->nodes().size() : 0;
}

TEST(FactsFile, EveryDocumentOfAYamlStreamCounts) {
  EXPECT_EQ(nodesIn(node("a") + "---\n" + node("b") + "---\n" + node("c")), 3u);
}

TEST(FactsFile, ListsAndObjectsMixedInOneStreamAllCount) {
  const std::string item = "{apiVersion: v1, kind: Node, metadata: {name: NAME}, status: {capacity: {nvidia.com/gpu: "
                           "\"8\"}, allocatable: {nvidia.com/gpu: \"8\"}}}";
  const auto named = [&](const std::string& name) { return std::string(item).replace(item.find("NAME"), 4, name); };
  const std::string list = "apiVersion: v1\nkind: List\nitems:\n- " + named("node-x") + "\n- " + named("node-y") + "\n";
  EXPECT_EQ(nodesIn(list + "---\n" + node("node-z")), 3u);
  EXPECT_EQ(nodesIn(list), 2u);
}

TEST(FactsFile, OneObjectAndKubectlsJsonListReadAsBefore) {
  EXPECT_EQ(nodesIn(node("a")), 1u);
  EXPECT_EQ(nodesIn(R"({"apiVersion":"v1","kind":"List","items":[)"
                    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"status":{"capacity":{"cpu":"8"}}},)"
                    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"b"},"status":{"capacity":{"cpu":"8"}}}]})"),
            2u);
}

}  // namespace
}  // namespace gpuguard::lint
