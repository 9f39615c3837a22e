// The value checks the webhook's flags share (webhook/flags.cpp, webhook/audit_flags.cpp):
// each makes a FlagSetter that stores a valid value and returns "" or says what is wrong.
#pragma once

#include <charconv>
#include <chrono>
#include <cstddef>
#include <string>
#include <system_error>

#include "webhook/flags.h"

namespace gpuguard::webhook {

// Any non-empty text, into a std::string or an optional one.
template <typename Text>
FlagSetter nonEmpty(Text& dst, std::string error = "must not be empty") {
  return [&dst, error](const std::string& v) -> std::string {
    if (v.empty()) return error;
    dst = v;
    return "";
  };
}

// A whole number from `min` to `max`, into `dst` (unsigned, std::size_t...).
template <typename Number>
FlagSetter wholeNumber(Number& dst, Number min, Number max, std::string error) {
  return [&dst, min, max, error](const std::string& v) -> std::string {
    Number n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < min || n > max) return error;
    dst = n;
    return "";
  };
}

// A duration (parseDuration) of at least `min`.
inline FlagSetter durationAtLeast(std::chrono::milliseconds& dst, std::chrono::milliseconds min, std::string error) {
  return [&dst, min, error](const std::string& v) -> std::string {
    const auto d = parseDuration(v);
    if (!d || *d < min) return error;
    dst = *d;
    return "";
  };
}

// A byte size (parseByteSize) of at least `min`, into `dst` (std::size_t or an optional).
template <typename Bytes>
FlagSetter byteSize(Bytes& dst, std::size_t min, std::string error) {
  return [&dst, min, error](const std::string& v) -> std::string {
    const auto n = parseByteSize(v);
    if (!n || *n < min) return error;
    dst = *n;
    return "";
  };
}

// on|true, off|false or auto, into an enum with members On, Off and Auto.
template <typename Switch>
FlagSetter onOffAuto(Switch& dst) {
  return [&dst](const std::string& v) -> std::string {
    if (v == "on" || v == "true") dst = Switch::On;
    else if (v == "off" || v == "false") dst = Switch::Off;
    else if (v == "auto") dst = Switch::Auto;
    else return "must be on, off or auto";
    return "";
  };
}

}  // namespace gpuguard::webhook
