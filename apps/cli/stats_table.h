// The statistics file of `volccl label --stats` and `volccl stats`: one row per component with
// the numbers of volccl::describe, as CSV (a header of column names) or JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "volccl/statistics.h"
#include "vtk_output.h"

namespace volccl::cli {

// describe() of every row of `moments` (row i: label i + 1); rows of no voxels stay zero.
std::vector<ComponentShape> DescribeComponents(const std::vector<ComponentMoments>& moments,
                                               const ImageGeometry& geometry, unsigned dimension);

// Writes one row per label that has voxels (a label image from elsewhere may skip some) to
// `staged`, as JSON when `format_of` ends in .json, else as CSV. Throws CommandError naming
// `named` when the file cannot be written.
// `values` (label maps): a "value" column after "label", values->values[i] in row i.
// `row_labels`: the label of row i is (*row_labels)[i] instead of i + 1 (volccl stats measures
// its labels renumbered to 1..K).
void WriteStatsTable(const std::vector<ComponentShape>& shapes, unsigned dimension,
                     const std::filesystem::path& format_of, const std::filesystem::path& staged,
                     const std::string& named, const vtk_output::ComponentValues* values = nullptr,
                     const std::vector<std::uint64_t>* row_labels = nullptr);

// `what` names the file in messages: "--stats" (volccl label) or "OUTPUT" (volccl stats):
// it must end in .csv or .json, differ from `output` and pass CheckWritableFile.
void CheckStatsOutput(const std::string& what, const std::filesystem::path& stats,
                      const std::filesystem::path& input, const std::filesystem::path& output,
                      bool force);

}  // namespace volccl::cli
