// Exact resource amounts for the scheduler's filters (NodeResourcesFit) and
// the cluster facts: requests summed over containers and pods, compared with
// and subtracted from a node's allocatable. rules/k8s/quantity.h
// parses and compares exactly but has no arithmetic; an Amount holds a
// Quantity's value in nano units (Quantity values are exact down to 10^-9) in
// a 128-bit integer, so "500m" + "1.5" is exactly "2" and 2^63 bytes of
// memory still fit. Magnitudes beyond 10^27 units saturate (no cluster has
// them; "1e100" stays "more than anything").
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/k8s/quantity.h"

namespace gpuguard {

// -Wpedantic: __int128 is a GCC/Clang extension.
__extension__ typedef __int128 Int128;

class Amount {
 public:
  Amount() = default;
  static Amount units(long long n);
  static Amount fromQuantity(const Quantity& q);
  // A JSON value as the API server decodes a Quantity (rules/k8s/quantity.h
  // decodeQuantity): nullopt when it does not parse.
  static std::optional<Amount> fromJson(const nlohmann::json& value);

  Amount operator+(const Amount& o) const;
  Amount operator-(const Amount& o) const;
  Amount& operator+=(const Amount& o) { return *this = *this + o; }
  Amount& operator-=(const Amount& o) { return *this = *this - o; }
  std::strong_ordering operator<=>(const Amount& o) const { return nano_ <=> o.nano_; }
  bool operator==(const Amount& o) const { return nano_ == o.nano_; }

  bool isZero() const { return nano_ == 0; }
  bool isNegative() const { return nano_ < 0; }
  // Whole units, rounded down, saturating at the range of long long.
  long long floorUnits() const;

  // "2", "1500m", "250u"; with `binary`, whole multiples of 1024 use
  // Ki..Ei ("16Gi"), the way memory is usually written.
  std::string str(bool binary = false) const;
  // str() with `binary` chosen by the resource (memory, ephemeral-storage,
  // hugepages-*).
  std::string strFor(std::string_view resourceName) const;

 private:
  Int128 nano_ = 0;
};

// Resource name -> amount (status.allocatable, a pod's requests).
using ResourceList = std::map<std::string, Amount, std::less<>>;

}  // namespace gpuguard
