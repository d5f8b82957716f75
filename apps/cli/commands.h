// The subcommands of volccl. Each adds itself to the command line and runs once parsed.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace volccl::cli {

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
