// Files of `volccl bench` are written under a temporary name and renamed when complete, so that a
// failed run never leaves a partial CSV, JSON or .npy behind.
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace volccl::bench {

// Writes `path` through `write(std::ostream&)`.
template <typename Write>
void write_file(const std::filesystem::path& path, Write write) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot open " + temporary.string() + " for writing");
    write(out);
    out.close();
    if (!out) throw std::runtime_error("writing " + temporary.string() + " failed");
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace volccl::bench
