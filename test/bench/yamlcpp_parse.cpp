// The reference for lint_vs_yamlcpp.sh: read each file and parse it with
// yaml-cpp's YAML::LoadAll, nothing more (no conversion, no rules). Prints
// "files=N docs=N bytes=N errors=N" on stderr.
//
//   yamlcpp-parse FILE...      or      yamlcpp-parse - < list-of-paths
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-") {
      for (std::string line; std::getline(std::cin, line);)
        if (!line.empty()) paths.push_back(line);
    } else {
      paths.emplace_back(argv[i]);
    }
  }
  std::size_t docs = 0, bytes = 0, errors = 0;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    bytes += text.size();
    try {
      docs += YAML::LoadAll(text).size();
    } catch (const std::exception&) {
      ++errors;
    }
  }
  std::fprintf(stderr, "files=%zu docs=%zu bytes=%zu errors=%zu\n", paths.size(), docs, bytes, errors);
  return 0;
}
