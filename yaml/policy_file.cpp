#include "yaml/policy_file.h"

#include <fstream>
#include <sstream>

#include "yaml/yaml_to_json.h"

namespace gpuguard::yaml {

Policy parsePolicy(std::string_view text, const std::string& source, std::string_view platform) {
  ParseResult parsed = parseStream(text);
  if (parsed.error) {
    throw PolicyError(source + ":" + std::to_string(parsed.error->position.line) + ":" +
                      std::to_string(parsed.error->position.column) + ": " + parsed.error->message);
  }
  if (parsed.documents.size() > 1) throw PolicyError(source + ": must hold a single YAML document");
  return Policy::fromJson(parsed.documents.empty() ? nlohmann::json() : parsed.documents.front().value, source,
                          platform);
}

Policy loadPolicyFile(const std::string& path, std::string_view platform) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PolicyError(path + ": cannot read policy file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parsePolicy(buf.str(), path, platform);
}

}  // namespace gpuguard::yaml
