// parallel_for over the process's thread pool: every index once for any count and thread count,
// callers on several threads at once, a call from inside a chunk, an exception from a chunk, and
// a child process made by fork() while the pool runs.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/cpu_parallel.h"

namespace volccl::detail {
namespace {

// How many times parallel_for(count, threads) visits each index: all ones when it works.
std::vector<int> visits(std::uint64_t count, unsigned threads) {
  std::vector<std::atomic<int>> seen(count);
  parallel_for(count, threads, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) ++seen[i];
  });
  return std::vector<int>(seen.begin(), seen.end());
}

TEST(ParallelFor, VisitsEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 3u, 7u, 17u}) {
    for (std::uint64_t count : {0u, 1u, 2u, 5u, 16u, 101u}) {
      EXPECT_EQ(visits(count, threads), std::vector<int>(count, 1))
          << count << " items, " << threads << " threads";
    }
  }
}

TEST(ParallelFor, CallersOnSeveralThreadsAtOnce) {
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&, c] {
      for (int repeat = 0; repeat < 200; ++repeat) {
        const std::uint64_t count = 37 + c + repeat % 5;
        if (visits(count, 2 + c % 3) != std::vector<int>(count, 1)) ++wrong;
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ParallelFor, CallFromInsideAChunk) {
  std::atomic<std::uint64_t> sum{0};
  parallel_for(4, 4, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t outer = begin; outer < end; ++outer) {
      parallel_for(100, 3, [&](std::uint64_t first, std::uint64_t last) {
        for (std::uint64_t i = first; i < last; ++i) sum += i;
      });
    }
  });
  EXPECT_EQ(sum.load(), 4u * 4950u);
}

TEST(ParallelFor, AChunksExceptionReachesTheCaller) {
  const auto throwing = [](std::uint64_t begin, std::uint64_t) {
    if (begin > 0) throw std::runtime_error("chunk failed");
  };
  EXPECT_THROW(parallel_for(8, 4, throwing), std::runtime_error);
  EXPECT_EQ(visits(50, 4), std::vector<int>(50, 1));  // the pool still works
}

TEST(ParallelFor, WorksInAChildOfFork) {
  EXPECT_EQ(visits(64, 4), std::vector<int>(64, 1));  // the pool's threads exist
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(visits(64, 4) == std::vector<int>(64, 1) ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace volccl::detail
