// Quantity.UnmarshalJSON: how the API server reads a JSON value into a
// Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go).
#include <charconv>
#include <cstdint>
#include <string>

#include "rules/k8s/quantity.h"

namespace gpuguard {

using nlohmann::json;

QuantityValue decodeQuantity(const json& value) {
  QuantityValue out;
  switch (value.type()) {
    case json::value_t::string:
      out.text = value.get_ref<const std::string&>();
      out.quantity = Quantity::parseTrimmed(out.text, &out.error);
      return out;
    case json::value_t::number_integer:
      out.text = std::to_string(value.get<std::int64_t>());
      break;
    case json::value_t::number_unsigned:
      out.text = std::to_string(value.get<std::uint64_t>());
      break;
    case json::value_t::number_float: {
      // The shortest text that reads back as the same double: what a YAML or
      // JSON author wrote, as far as a double can tell (0.5, 1, 1e+21).
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, value.get<double>());
      out.text.assign(buf, res.ptr);
      break;
    }
    case json::value_t::null:
      out.text = "null";
      out.quantity = Quantity::parse("0");
      return out;
    default:
      out.text = value.dump();
      out.error = QuantityError::FormatWrong;
      return out;
  }
  out.quantity = Quantity::parse(out.text, &out.error);
  return out;
}

}  // namespace gpuguard
