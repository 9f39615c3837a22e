#include "rules/nvidia/drivers.h"

#include <algorithm>
#include <string>

namespace gpuguard {
namespace {

// 565 reports CUDA 12.7, a version no toolkit was released as.
constexpr std::array<DriverBranch, 25> kBranches{{{410, 10, 0}, {418, 10, 1}, {440, 10, 2}, {450, 11, 0}, {455, 11, 1},
                                                  {460, 11, 2}, {465, 11, 3}, {470, 11, 4}, {495, 11, 5}, {510, 11, 6},
                                                  {515, 11, 7}, {520, 11, 8}, {525, 12, 0}, {530, 12, 1}, {535, 12, 2},
                                                  {545, 12, 3}, {550, 12, 4}, {555, 12, 5}, {560, 12, 6}, {565, 12, 7},
                                                  {570, 12, 8}, {575, 12, 9}, {580, 13, 0}, {590, 13, 1}, {595, 13, 2}}};

bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::span<const DriverBranch> driverBranches() { return kBranches; }

const DriverBranch* knownBranch(long long driverMajor) {
  for (const DriverBranch& b : kBranches) {
    if (b.driver == driverMajor) return &b;
  }
  return nullptr;
}

std::optional<DriverFloor> floorFor(const CudaVersion& v) {
  switch (v.major) {
    case 13: return DriverFloor{{580, 0, 0}, "580", "CUDA 13.x minor-version compatibility"};
    case 12: return DriverFloor{{525, 60, 13}, "525.60.13", "CUDA 12.x minor-version compatibility"};
    case 11:
      // 11.1+ needs 450.80.02; 11.0 (or an unknown minor) the lower 450.36.06.
      if (v.minor && *v.minor >= 1) return DriverFloor{{450, 80, 2}, "450.80.02", "CUDA 11.x minor-version compatibility"};
      return DriverFloor{{450, 36, 6}, "450.36.06", "CUDA 11.0"};
    case 10:
      if (!v.minor) return std::nullopt;
      if (*v.minor == 2) return DriverFloor{{440, 33, 0}, "440.33", "CUDA 10.2, which has no minor-version compatibility"};
      if (*v.minor == 1) return DriverFloor{{418, 39, 0}, "418.39", "CUDA 10.1, which has no minor-version compatibility"};
      if (*v.minor == 0) return DriverFloor{{410, 48, 0}, "410.48", "CUDA 10.0, which has no minor-version compatibility"};
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::string driverVersionText(const DriverVersion& t, bool full) {
  if (!full) return std::to_string(t[0]);
  auto two = [](long long n) { return (n < 10 ? "0" : "") + std::to_string(n); };
  std::string s = std::to_string(t[0]) + "." + two(t[1]);
  if (t[2] != 0) s += "." + two(t[2]);
  return s;
}

std::optional<DriverVersion> parseDottedVersion(std::string_view s, int minParts, int maxParts) {
  DriverVersion t{0, 0, 0};
  int parts = 0;
  std::size_t pos = 0;
  while (parts < maxParts) {
    std::size_t dot = s.find('.', pos);
    std::string_view part = s.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (part.empty() || part.size() > 9 || !std::all_of(part.begin(), part.end(), isAsciiDigit)) return std::nullopt;
    t[static_cast<std::size_t>(parts++)] = std::stoll(std::string(part));
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
    if (parts == maxParts) return std::nullopt;
  }
  if (parts < minParts) return std::nullopt;
  return t;
}

}  // namespace gpuguard
