// Milliseconds between successive calls: the step timings of the CPU backend and host-side
// times elsewhere (allocation, the command line's reading and writing).
#pragma once

#include <chrono>

namespace volccl::detail {

class StepClock {
 public:
  // Milliseconds since construction or the previous lap.
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace volccl::detail
