// The algorithm registry (dispatch/algorithms.cpp) is consistent with itself and with the public
// functions that read it: one entry per algorithm in enumeration order, an entry point wherever a
// connectivity is claimed, exactly one choice of `auto` per connectivity and backend.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dispatch/algorithm_registry.h"
#include "volccl/volccl.h"

namespace volccl {
namespace {

using detail::algorithm_registry;
using detail::AlgorithmEntry;

constexpr int kConnectivities[] = {4, 8, 6, 18, 26};

TEST(Registry, OneEntryPerAlgorithmInEnumerationOrder) {
  const auto& registry = algorithm_registry();
  ASSERT_FALSE(registry.empty());
  std::set<std::string> names;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    // Algorithm::automatic is 0; the concrete ones follow it.
    EXPECT_EQ(static_cast<std::size_t>(registry[i].algorithm), i + 1) << registry[i].name;
    EXPECT_TRUE(names.insert(registry[i].name).second) << "duplicate name " << registry[i].name;
    EXPECT_NE(std::string(registry[i].name), "auto");
    EXPECT_FALSE(std::string(registry[i].summary).empty()) << registry[i].name;
    EXPECT_EQ(parse_algorithm(registry[i].name), registry[i].algorithm);
    EXPECT_EQ(to_string(registry[i].algorithm), registry[i].name);
    EXPECT_EQ(summary(registry[i].algorithm), registry[i].summary);
  }
  EXPECT_EQ(all_algorithms().size(), registry.size());
  // The value after the last entry is no algorithm.
  const auto past_the_end = static_cast<Algorithm>(registry.size() + 1);
  EXPECT_THROW(to_string(past_the_end), InvalidArgument);
  EXPECT_THROW(detail::registry_entry(Algorithm::automatic), InvalidArgument);
}

TEST(Registry, EveryClaimedConnectivityHasItsEntryPoints) {
  for (const AlgorithmEntry& entry : algorithm_registry()) {
    int taken = 0;
    for (int connectivity : kConnectivities) {
      const bool claimed = entry.connectivities.contains(connectivity);
      EXPECT_EQ(supports(entry.algorithm, connectivity), claimed) << entry.name << connectivity;
      if (!claimed) continue;
      ++taken;
      const detail::Labelers& labelers = entry.labelers(connectivity);
      EXPECT_NE(labelers.cpu, nullptr) << entry.name << " at " << connectivity;
#if defined(VOLCCL_HAS_CUDA)
      EXPECT_EQ(labelers.cuda == nullptr, entry.cpu_only) << entry.name << " at " << connectivity;
#else
      EXPECT_EQ(labelers.cuda, nullptr) << entry.name << " at " << connectivity;
#endif
    }
    EXPECT_GT(taken, 0) << entry.name;
    EXPECT_TRUE(runs_on(entry.algorithm, Backend::cpu)) << entry.name;
    EXPECT_EQ(runs_on(entry.algorithm, Backend::cuda), !entry.cpu_only) << entry.name;
    // A limitation is said exactly where some connectivity is refused.
    EXPECT_EQ(std::string(entry.limitation).empty(), taken == 5) << entry.name;
    std::vector<int> expected;
    for (int connectivity : {4, 6, 8, 18, 26}) {
      if (entry.connectivities.contains(connectivity)) expected.push_back(connectivity);
    }
    EXPECT_EQ(connectivities(entry.algorithm), expected) << entry.name;
    // Every algorithm takes the Late statistics and binary masks.
    EXPECT_TRUE(entry.statistics_strategies.contains(static_cast<int>(StatisticsStrategy::late)))
        << entry.name;
    EXPECT_TRUE(entry.inputs.contains(static_cast<int>(detail::InputKind::binary_mask)))
        << entry.name;
    for (StatisticsStrategy strategy :
         {StatisticsStrategy::late, StatisticsStrategy::fused, StatisticsStrategy::early}) {
      EXPECT_EQ(supports(strategy, entry.algorithm),
                entry.statistics_strategies.contains(static_cast<int>(strategy)))
          << entry.name << " " << to_string(strategy);
    }
  }
}

TEST(Registry, AutoPicksExactlyOneCapableAlgorithmPerConnectivityAndBackend) {
  for (Backend backend : {Backend::cuda, Backend::cpu}) {
    for (int connectivity : kConnectivities) {
      int chosen = 0;
      for (const AlgorithmEntry& entry : algorithm_registry()) {
        const detail::SmallSet& choices =
            backend == Backend::cuda ? entry.automatic_on_cuda : entry.automatic_on_cpu;
        if (!choices.contains(connectivity)) continue;
        ++chosen;
        EXPECT_TRUE(entry.connectivities.contains(connectivity))
            << entry.name << " is auto's choice at " << connectivity << " but cannot label it";
        EXPECT_FALSE(backend == Backend::cuda && entry.cpu_only) << entry.name;
        EXPECT_EQ(automatic_choice(connectivity, backend), entry.algorithm);
      }
      EXPECT_EQ(chosen, 1) << to_string(backend) << " at " << connectivity;
    }
    EXPECT_THROW(automatic_choice(5, backend), InvalidArgument);
  }
  EXPECT_THROW(automatic_choice(26, Backend::automatic), InvalidArgument);
}

TEST(Registry, RefusalsNameTheAlgorithmsThatCanLabel) {
  for (const AlgorithmEntry& entry : algorithm_registry()) {
    for (int connectivity : kConnectivities) {
      if (entry.connectivities.contains(connectivity)) continue;
      LabelOptions options;
      options.algorithm = entry.algorithm;
      options.connectivity = connectivity;
      const Extent3 extent = is_2d_connectivity(connectivity) ? Extent3{4, 4, 1} : Extent3{4, 4, 4};
      try {
        validate(extent, options);
        ADD_FAILURE() << entry.name << " accepted " << connectivity;
      } catch (const InvalidArgument& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find(entry.limitation), std::string::npos) << message;
        for (const AlgorithmEntry& other : algorithm_registry()) {
          if (!other.connectivities.contains(connectivity)) continue;
          EXPECT_NE(message.find(std::string(other.name) + ","), std::string::npos)
              << message << " should name " << other.name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace volccl
