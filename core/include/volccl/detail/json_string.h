// A string as a JSON string literal: the command line's --timings and --stats .json and the
// benchmark's rows write their names and paths with it.
#pragma once

#include <cstdio>
#include <string>

namespace volccl::detail {

inline std::string json_string(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + '"';
}

}  // namespace volccl::detail
