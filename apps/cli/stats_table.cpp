#include "stats_table.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "command_support.h"
#include "volccl/detail/json_string.h"

namespace volccl::cli {
namespace {

constexpr const char* kAxes[] = {"x", "y", "z"};
// The unique covariance terms as ComponentShape stores them, and the ones of 2D images.
constexpr const char* kTerms3[] = {"xx", "yy", "zz", "xy", "xz", "yz"};
constexpr int kTermIndices3[] = {0, 1, 2, 3, 4, 5};
constexpr const char* kTerms2[] = {"xx", "yy", "xy"};
constexpr int kTermIndices2[] = {0, 1, 3};

std::vector<std::string> Columns(unsigned dimension, bool with_values) {
  std::vector<std::string> columns = {"label"};
  if (with_values) columns.push_back("value");
  for (const char* column : {"count", "physical_size"}) columns.push_back(column);
  for (unsigned i = 0; i < dimension; ++i) columns.push_back(std::string("centroid_") + kAxes[i]);
  for (unsigned i = 0; i < dimension; ++i) {
    columns.push_back(std::string("centroid_index_") + kAxes[i]);
  }
  const unsigned terms = dimension == 3 ? 6 : 3;
  for (unsigned t = 0; t < terms; ++t) {
    columns.push_back(std::string("covariance_") + (dimension == 3 ? kTerms3 : kTerms2)[t]);
  }
  for (unsigned r = 0; r < dimension; ++r) {
    columns.push_back("principal_moment_" + std::to_string(r + 1));
  }
  for (unsigned r = 0; r < dimension; ++r) {
    for (unsigned i = 0; i < dimension; ++i) {
      columns.push_back("principal_axis_" + std::to_string(r + 1) + "_" + kAxes[i]);
    }
  }
  for (const char* end : {"min", "max"}) {
    for (unsigned i = 0; i < dimension; ++i) {
      columns.push_back(std::string("bounding_box_") + end + "_" + kAxes[i]);
    }
  }
  return columns;
}

// The values of Columns() for the label of row `index`.
std::vector<std::string> Row(std::uint64_t label, std::size_t index, const ComponentShape& shape,
                             unsigned dimension, const vtk_output::ComponentValues* values) {
  std::vector<std::string> row = {std::to_string(label)};
  if (values != nullptr) {
    const std::int64_t value = values->values.at(index);
    row.push_back(values->is_unsigned ? std::to_string(static_cast<std::uint64_t>(value))
                                      : std::to_string(value));
  }
  row.push_back(std::to_string(shape.count));
  row.push_back(Number(shape.physical_size));
  for (unsigned i = 0; i < dimension; ++i) row.push_back(Number(shape.centroid[i]));
  for (unsigned i = 0; i < dimension; ++i) row.push_back(Number(shape.centroid_index[i]));
  const unsigned terms = dimension == 3 ? 6 : 3;
  for (unsigned t = 0; t < terms; ++t) {
    row.push_back(Number(shape.covariance[(dimension == 3 ? kTermIndices3 : kTermIndices2)[t]]));
  }
  for (unsigned r = 0; r < dimension; ++r) row.push_back(Number(shape.principal_moments[r]));
  for (unsigned r = 0; r < dimension; ++r) {
    for (unsigned i = 0; i < dimension; ++i) {
      row.push_back(Number(shape.principal_axes[3 * r + i]));
    }
  }
  for (unsigned i = 0; i < dimension; ++i) {
    row.push_back(std::to_string(shape.bounding_box_min[i]));
  }
  for (unsigned i = 0; i < dimension; ++i) {
    row.push_back(std::to_string(shape.bounding_box_max[i]));
  }
  return row;
}

}  // namespace

std::vector<ComponentShape> DescribeComponents(const std::vector<ComponentMoments>& moments,
                                               const ImageGeometry& geometry, unsigned dimension) {
  std::vector<ComponentShape> shapes(moments.size());
  for (std::size_t i = 0; i < moments.size(); ++i) {
    if (moments[i].count != 0) {
      shapes[i] = describe(moments[i], geometry, static_cast<int>(dimension));
    }
  }
  return shapes;
}

void WriteStatsTable(const std::vector<ComponentShape>& shapes, unsigned dimension,
                     const fs::path& format_of, const fs::path& staged, const std::string& named,
                     const vtk_output::ComponentValues* values,
                     const std::vector<std::uint64_t>* row_labels) {
  std::ofstream file(staged);
  const std::vector<std::string> columns = Columns(dimension, values != nullptr);
  const bool json = format_of.extension() == ".json";
  if (json) {
    file << "{\"dimension\": " << dimension << ", \"columns\": [";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      file << (c ? ", " : "") << detail::json_string(columns[c]);
    }
    file << "],\n \"rows\": [";
  } else {
    for (std::size_t c = 0; c < columns.size(); ++c) file << (c ? "," : "") << columns[c];
    file << '\n';
  }
  bool first = true;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].count == 0) continue;
    const std::uint64_t label = row_labels != nullptr ? row_labels->at(i) : i + 1;
    const std::vector<std::string> row = Row(label, i, shapes[i], dimension, values);
    if (json) file << (first ? "\n  [" : ",\n  [");
    first = false;
    for (std::size_t c = 0; c < row.size(); ++c) file << (c ? (json ? ", " : ",") : "") << row[c];
    file << (json ? "]" : "\n");
  }
  if (json) file << "]}\n";
  file.close();
  if (!file) throw CommandError("cannot write " + named + ": " + std::strerror(errno));
}

void CheckStatsOutput(const std::string& what, const fs::path& stats, const fs::path& input,
                      const fs::path& output, bool force) {
  const std::string named = what + " " + Quoted(stats);
  const std::string extension = stats.extension().string();
  if (stats.has_filename() && extension != ".csv" && extension != ".json") {
    throw CommandError(named + ": the file must end in .csv or .json");
  }
  if (!output.empty() &&
      fs::absolute(stats).lexically_normal() == fs::absolute(output).lexically_normal()) {
    throw CommandError(named + " is also OUTPUT");
  }
  CheckWritableFile(named, stats, input, force);
}

}  // namespace volccl::cli
