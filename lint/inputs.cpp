#include "lint/inputs.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

namespace gpuguard::lint {
namespace {

namespace fs = std::filesystem;

bool hasManifestExtension(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

bool matchHere(std::string_view pattern, std::string_view path) {
  while (!pattern.empty()) {
    if (pattern.starts_with("**")) {
      pattern.remove_prefix(2);
      if (pattern.empty()) return true;  // "dir/**": everything below
      // "**/x": zero or more whole segments, then x; "**x": anything, then x.
      const bool segments = pattern.starts_with("/");
      if (segments) pattern.remove_prefix(1);
      for (std::size_t i = 0; i <= path.size(); ++i) {
        if ((!segments || i == 0 || path[i - 1] == '/') && matchHere(pattern, path.substr(i))) return true;
      }
      return false;
    }
    if (pattern.front() == '*') {
      pattern.remove_prefix(1);
      for (std::size_t i = 0; i <= path.size(); ++i) {
        if (matchHere(pattern, path.substr(i))) return true;
        if (i < path.size() && path[i] == '/') return false;
      }
      return false;
    }
    if (path.empty() || (pattern.front() != '?' && pattern.front() != path.front()) ||
        (pattern.front() == '?' && path.front() == '/')) {
      return false;
    }
    pattern.remove_prefix(1);
    path.remove_prefix(1);
  }
  return path.empty();
}

struct Selection {
  const std::vector<std::string>& include;
  const std::vector<std::string>& exclude;
  fs::path base;  // absolute, or empty

  bool selected(const std::string& path) const {
    if (include.empty() && exclude.empty()) return true;
    std::string relative;
    if (!base.empty()) {
      std::error_code ec;
      const fs::path abs = fs::absolute(path, ec).lexically_normal();
      const fs::path rel = abs.lexically_relative(base);
      if (!ec && !rel.empty() && *rel.begin() != "..") relative = rel.generic_string();
    }
    auto matches = [&](const std::string& g) {
      return globMatch(g, path) || (!relative.empty() && globMatch(g, relative));
    };
    if (!include.empty() && std::none_of(include.begin(), include.end(), matches)) return false;
    return std::none_of(exclude.begin(), exclude.end(), matches);
  }
};

// A symbolic link that leads nowhere (broken, or a loop). Such a manifest
// is listed anyway, so reading it reports why, rather than the file
// vanishing from the run.
bool isDeadLink(const fs::directory_entry& entry) {
  std::error_code ec;
  if (!entry.is_symlink(ec)) return false;
  const fs::file_status target = fs::status(entry.path(), ec);
  return ec || target.type() == fs::file_type::not_found;
}

void walkDirectory(const fs::path& root, const Selection& selection, std::vector<std::string>& out) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_directory(ec)) {
      if (name.size() > 1 && name.front() == '.') it.disable_recursion_pending();
      continue;
    }
    if (hasManifestExtension(p) && (it->is_regular_file(ec) || isDeadLink(*it)) && selection.selected(p.generic_string())) {
      found.push_back(p.generic_string());
    }
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

}  // namespace

bool globMatch(std::string_view pattern, std::string_view path) {
  if (pattern.starts_with("./")) pattern.remove_prefix(2);
  if (path.starts_with("./")) path.remove_prefix(2);
  if (pattern.find('/') == std::string_view::npos) {
    const std::size_t slash = path.rfind('/');
    return matchHere(pattern, slash == std::string_view::npos ? path : path.substr(slash + 1));
  }
  return matchHere(pattern, path);
}

ExpandedInputs expandInputs(const std::vector<std::string>& paths, const std::vector<std::string>& include,
                            const std::vector<std::string>& exclude, const std::string& base) {
  ExpandedInputs out;
  Selection selection{include, exclude, {}};
  if (!base.empty()) {
    std::error_code ec;
    selection.base = fs::absolute(base, ec).lexically_normal();
    if (ec) selection.base.clear();
  }
  for (const std::string& p : paths) {
    std::error_code ec;
    if (p == "-") {
      out.files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      walkDirectory(p, selection, out.files);
    } else if (fs::exists(p, ec) || fs::is_symlink(fs::symlink_status(p, ec))) {
      // Named explicitly: whatever its extension; a dead link is read, and
      // fails with its reason (a loop, a missing target).
      if (selection.selected(p)) out.files.push_back(p);
    } else {
      out.problems.push_back(p);
    }
  }
  // A file named twice (or reached from two arguments) is linted, and fixed,
  // once.
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (std::string& f : out.files) {
    if (seen.insert(f == "-" ? f : fs::path(f).lexically_normal().generic_string()).second) unique.push_back(std::move(f));
  }
  out.files = std::move(unique);
  return out;
}

}  // namespace gpuguard::lint
