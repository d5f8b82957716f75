// The engine of `volccl bench`: times volccl's labeling algorithms on a list of volumes the way
// docs/design.md (Performance) and YACCLAB (BUF/BKE paper, Sec. 6.2) ask, after checking their
// labels, and times CPU peers (ITK's filter) on the same volumes. Needs neither ITK nor CLI11: the
// command line (apps/cli/bench_command.cpp) builds the volume list and the peers.
//
// YACCLAB's tests: "average" (the whole labeling, allocation of the output included, median of
// Settings::runs), "average with steps" (Settings::steps: each step timed apart in further runs)
// and "granularity" (the random volumes of granularity_volumes(), timed as "average").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_volumes.h"
#include "volccl/types.h"

namespace volccl::bench {

struct Settings {
  std::string device = "cuda";  // or "cpu"
  int connectivity = 26;
  std::vector<Algorithm> algorithms;  // each must support the connectivity
  int runs = 50;                      // timed runs per algorithm and volume
  int warmup = 5;                     // untimed runs before them
  bool steps = true;                  // also the step timings (YACCLAB's "average with steps")
  int step_runs = 20;
  bool statistics = false;   // also labeling + statistics by each strategy, moments checked
  int peer_runs = 3;         // timed runs of each CPU peer, without warm-up (they take seconds)
  unsigned cpu_threads = 0;  // worker threads of the CPU backend; 0: one per hardware thread
  std::string csv;           // files to write, when not empty
  std::string json;
  std::string dump_dir;  // each volume and the first algorithm's labels as .npy, for peers.py
};

// A labeler volccl is compared with on the CPU, in the same run: `label` labels the mask at the
// connectivity and returns the component count, which must equal volccl's; everything it does
// (output allocation included) is timed. `unsupported` says why it cannot label at a
// connectivity, or is empty.
struct CpuPeer {
  std::string name;
  std::function<std::string(int connectivity)> unsupported;
  std::function<std::uint32_t(const data::Volume& volume, int connectivity)> label;
};

// Checks, times and reports every volume in turn: prints the tables to stdout and writes the
// CSV, JSON and dumps that `settings` names. Throws on a wrong label or a failed run.
void run(const Settings& settings, const std::vector<BenchVolume>& volumes,
         const std::vector<CpuPeer>& peers);

}  // namespace volccl::bench
