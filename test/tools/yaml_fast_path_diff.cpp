// yaml-fast-path-diff FILE_OR_DIR...: the YAML fast path against yaml-cpp on
// real files. Splits each YAML file (*.yaml, *.yml; directories recursively)
// into '---' sections as the loader does and, for every section the fast
// path takes, compares its events with yaml-cpp's (test/unit/yaml/
// yaml_event_log.h). Prints the share of sections the fast path takes and
// every disagreement; exits 1 on any.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "test/unit/yaml/yaml_event_log.h"
#include "yaml/yaml_to_json_internal.h"

namespace {

namespace fs = std::filesystem;

struct Tally {
  std::size_t files = 0, sections = 0, taken = 0, bytes = 0, takenBytes = 0, mismatches = 0;
};

void checkFile(const fs::path& path, Tally& tally) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  ++tally.files;
  for (const auto& section : gpuguard::yaml::detail::splitSections(text, gpuguard::yaml::Limits{})) {
    if (section.error) continue;  // never parsed
    const std::string_view chunk = std::string_view(text).substr(section.begin, section.end - section.begin);
    ++tally.sections;
    tally.bytes += chunk.size();
    const auto fast = gpuguard::yaml::testing::fastPathEvents(chunk);
    if (!fast) continue;
    ++tally.taken;
    tally.takenBytes += chunk.size();
    const auto reference = gpuguard::yaml::testing::yamlCppEvents(chunk);
    if (reference == fast) continue;
    ++tally.mismatches;
    std::printf("MISMATCH %s (section at line %d)\n--- fast path\n%s--- yaml-cpp\n%s\n", path.c_str(), section.firstLine,
                fast->c_str(), reference ? reference->c_str() : "(error)\n");
  }
}

bool isYaml(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: yaml-fast-path-diff FILE_OR_DIR...\n");
    return 2;
  }
  Tally tally;
  for (int i = 1; i < argc; ++i) {
    const fs::path root(argv[i]);
    if (fs::is_directory(root)) {
      for (const auto& entry : fs::recursive_directory_iterator(root))
        if (entry.is_regular_file() && isYaml(entry.path())) checkFile(entry.path(), tally);
    } else {
      checkFile(root, tally);
    }
  }
  const auto percent = [](std::size_t part, std::size_t whole) { return whole ? 100.0 * double(part) / double(whole) : 0.0; };
  std::printf("files %zu, sections %zu, fast path %zu (%.1f%% of sections, %.1f%% of bytes), mismatches %zu\n", tally.files,
              tally.sections, tally.taken, percent(tally.taken, tally.sections), percent(tally.takenBytes, tally.bytes),
              tally.mismatches);
  return tally.mismatches == 0 ? 0 : 1;
}
