// The subcommands of volccl. Each adds itself to the command line and runs once parsed.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace volccl::cli {

// The check of every whole-number option: decimal digits only, from `low` to `high` (the
// option type's largest value at most). CLI11 converts with strtoull, which makes "-1" an
// unsigned option's largest value, "99999999999999999999" a 64-bit one's, "010" 8 and "0x10" 16;
// this check runs on the text before that and refuses them as a bad command line (exit 2).
// `text` as a whole decimal number (digits only, no leading zero) that fits 64 bits, or nothing.
inline std::optional<std::uint64_t> ParseWholeNumber(const std::string& text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    const unsigned digit = static_cast<unsigned>(c - '0');
    if (!std::isdigit(static_cast<unsigned char>(c)) ||
        value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  return value;
}

inline CLI::Validator WholeNumber(std::uint64_t low = 0,
                                  std::uint64_t high = std::numeric_limits<std::uint64_t>::max()) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        const std::optional<std::uint64_t> value = ParseWholeNumber(text);
        if (value && low <= *value && *value <= high) return {};
        return "'" + text + "' is not a whole number from " + std::to_string(low) + " to " +
               std::to_string(high);
      },
      "", "WholeNumber");
}

template <typename T>
CLI::Validator WholeNumberOf(std::uint64_t low = 0) {
  return WholeNumber(low, static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
}

class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  const CLI::App& App() const { return *app_; }
  // The exit status: 0 success; failures throw (main prints them).
  virtual int Run() const = 0;

 private:
  CLI::App* app_;
};

std::unique_ptr<Command> AddLabelCommand(CLI::App& app);     // label_command.cpp
std::unique_ptr<Command> AddStatsCommand(CLI::App& app);     // stats_command.cpp
std::unique_ptr<Command> AddGenerateCommand(CLI::App& app);  // generate_command.cpp
std::unique_ptr<Command> AddInfoCommand(CLI::App& app);      // info_command.cpp
std::unique_ptr<Command> AddBenchCommand(CLI::App& app);     // bench_command.cpp

}  // namespace volccl::cli
