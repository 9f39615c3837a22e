// Whether two nlohmann::json trees are the same value *and* the same types:
// json's operator== calls 1 (unsigned), 1 (signed) and 1.0 equal and -0.0
// equal to 0.0; a reader that must build exactly what nlohmann builds may not
// differ even there. Used by the JSON reader's unit tests and fuzz harness.
#pragma once

#include <cstring>

#include <nlohmann/json.hpp>

namespace gpuguard::fuzz {

inline bool sameJson(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case nlohmann::json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
        if (ia.key() != ib.key() || !sameJson(*ia, *ib)) return false;
      }
      return true;
    }
    case nlohmann::json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!sameJson(a[i], b[i])) return false;
      }
      return true;
    }
    case nlohmann::json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;  // tells -0.0 from 0.0
    }
    default:
      return a == b;
  }
}

}  // namespace gpuguard::fuzz
