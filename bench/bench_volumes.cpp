#include "bench_volumes.h"

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "volccl/data/ridge.h"
#include "write_file.h"

namespace volccl::bench {
namespace {

namespace fs = std::filesystem;

BenchVolume random_volume(std::string prefix, std::string dataset, Extent3 extent,
                          unsigned density_percent, unsigned granularity, std::uint32_t seed) {
  BenchVolume volume;
  volume.name = prefix + "-" + std::to_string(extent.x) + "-d" + std::to_string(density_percent) +
                "-g" + std::to_string(granularity);
  volume.dataset = std::move(dataset);
  volume.granularity = granularity;
  volume.seed = seed;
  volume.load = [=] {
    return data::random_granular(extent, density_percent / 100.0, granularity, seed);
  };
  return volume;
}

BenchVolume random_cube(std::uint64_t side, unsigned density_percent, unsigned granularity,
                        std::uint32_t seed) {
  return random_volume("random", "random", {side, side, side}, density_percent, granularity, seed);
}

BenchVolume hilbert_volume(unsigned order, std::uint64_t side) {
  BenchVolume volume;
  volume.name = "hilbert-" + std::to_string(side) + "-o" + std::to_string(order);
  volume.dataset = "hilbert";
  volume.order = order;
  volume.load = [=] { return data::hilbert(order, side); };
  return volume;
}

// A .npy or .npy.gz file read through zlib, which reads uncompressed files as they are.
class NpyReader {
 public:
  explicit NpyReader(const fs::path& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (file_ == nullptr) throw std::runtime_error("cannot open " + path.string());
  }
  ~NpyReader() { gzclose(file_); }
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;

  void read(void* target, std::uint64_t bytes) {
    auto* bytes_out = static_cast<char*>(target);
    while (bytes > 0) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::uint64_t>(bytes, 1u << 30));
      const int got = gzread(file_, bytes_out, chunk);
      if (got <= 0) throw std::runtime_error(path_.string() + " is truncated or corrupt");
      bytes_out += got;
      bytes -= static_cast<unsigned>(got);
    }
  }

 private:
  fs::path path_;
  gzFile file_;
};

// The value of `key` in a .npy header, a Python dict literal: the text after "'key':" up to the
// next ',' at the top level (the shape's tuple kept whole).
std::string header_value(const std::string& header, const std::string& key, const fs::path& path) {
  const std::size_t at = header.find("'" + key + "'");
  const std::size_t colon = at == std::string::npos ? at : header.find(':', at);
  if (colon == std::string::npos) {
    throw std::runtime_error(path.string() + ": no '" + key + "' in the .npy header " + header);
  }
  std::size_t end = colon + 1;
  for (int depth = 0; end < header.size(); ++end) {
    if (header[end] == '(') ++depth;
    if (header[end] == ')') --depth;
    if (depth == 0 && (header[end] == ',' || header[end] == '}')) break;
  }
  std::string value = header.substr(colon + 1, end - colon - 1);
  value.erase(0, value.find_first_not_of(' '));
  value.erase(value.find_last_not_of(' ') + 1);
  return value;
}

}  // namespace

std::vector<BenchVolume> random_volumes() {
  return {random_cube(256, 30, 1, 1), random_cube(256, 30, 8, 2), random_cube(512, 30, 1, 3),
          random_cube(512, 30, 8, 4)};
}

std::vector<BenchVolume> hilbert_volumes() {
  std::vector<BenchVolume> volumes;
  for (unsigned order = 1; order <= 6; ++order) volumes.push_back(hilbert_volume(order, 128));
  return volumes;
}

std::vector<BenchVolume> granularity_volumes(unsigned dimensions, unsigned density_step,
                                             const std::vector<unsigned>& granularities) {
  const std::uint64_t side = dimensions == 2 ? 2048 : 256;
  const Extent3 extent{side, side, dimensions == 2 ? 1 : side};
  std::vector<BenchVolume> volumes;
  for (const unsigned granularity : granularities) {
    for (unsigned density = 0; density <= 100; density += density_step) {
      // One seed per (granularity, density), the same whatever else the run holds.
      const std::uint32_t seed = (dimensions == 2 ? 200000 : 300000) + granularity * 1000 + density;
      volumes.push_back(
          random_volume("granularity", "granularity", extent, density, granularity, seed));
      volumes.back().with_peers = false;
    }
  }
  return volumes;
}

std::vector<BenchVolume> ridge_volumes(std::uint64_t side) {
  using data::RidgeFamily;
  std::vector<BenchVolume> volumes;
  for (const RidgeFamily family :
       {RidgeFamily::leveling, RidgeFamily::scaling, RidgeFamily::subdivision,
        RidgeFamily::random_instancing, RidgeFamily::random_merging, RidgeFamily::spiral}) {
    data::RidgeFamilyParameters parameters;
    parameters.family = family;
    const std::string name = data::to_string(family);
    const std::size_t size = data::ridge_family_size(parameters, side);
    for (std::size_t index = 0; index < size; ++index) {
      BenchVolume volume;
      volume.name = name + "-" + std::to_string(side) + "-i" + std::to_string(index);
      volume.dataset = "ridge-" + name;
      volume.x = data::ridge_family_x(parameters, index, side);
      volume.with_peers = false;
      volume.load = [parameters, index, side] {
        return data::ridge_family_member(parameters, index, side);
      };
      volumes.push_back(volume);
    }
  }
  return volumes;
}

namespace {

// Random cubes of `side` at density 5, 30 and 60 % and granularity 1 and 8, seeded from `seed`.
std::vector<BenchVolume> density_granularity_cubes(std::uint32_t side, std::uint32_t seed) {
  std::vector<BenchVolume> volumes;
  for (const unsigned density : {5u, 30u, 60u}) {
    for (const unsigned granularity : {1u, 8u}) {
      volumes.push_back(random_cube(side, density, granularity, seed++));
    }
  }
  return volumes;
}

}  // namespace

std::vector<BenchVolume> statistics_volumes() { return density_granularity_cubes(512, 20); }

std::vector<BenchVolume> cpu_volumes() { return density_granularity_cubes(256, 40); }

std::vector<BenchVolume> quick_volumes(unsigned dimensions) {
  if (dimensions == 2) {
    return {random_volume("image", "random", {256, 256, 1}, 50, 1, 6),
            random_volume("image", "random", {512, 512, 1}, 50, 1, 7)};
  }
  return {random_cube(64, 30, 1, 5), hilbert_volume(4, 32)};
}

BenchVolume npy_volume(const std::string& name, const std::string& dataset, const fs::path& path) {
  BenchVolume volume;
  volume.name = name;
  volume.dataset = dataset;
  volume.load = [path] { return read_npy(path); };
  return volume;
}

data::Volume read_npy(const fs::path& path) {
  NpyReader in(path);
  char preamble[8];
  in.read(preamble, sizeof preamble);
  if (std::string(preamble, 6) != "\x93NUMPY" || preamble[6] < 1 || preamble[6] > 3) {
    throw std::runtime_error(path.string() + " is not a .npy file of format 1, 2 or 3");
  }
  unsigned char size_bytes[4] = {0, 0, 0, 0};
  in.read(size_bytes, preamble[6] == 1 ? 2 : 4);
  const std::uint32_t header_size = size_bytes[0] | size_bytes[1] << 8 | size_bytes[2] << 16 |
                                    static_cast<std::uint32_t>(size_bytes[3]) << 24;
  std::string header(header_size, ' ');
  in.read(header.data(), header_size);

  const std::string descr = header_value(header, "descr", path);
  // '|u1', '<u4', '>u2', ...: the byte order, then 'u' and the item size.
  if (descr.size() != 5 || descr[2] != 'u' ||
      std::string("1248").find(descr[3]) == std::string::npos) {
    throw std::runtime_error(path.string() + ": expected unsigned integers, found " + descr);
  }
  // Non-zero is foreground in either byte order, so the order is not needed.
  const unsigned item_size = static_cast<unsigned>(descr[3] - '0');
  const bool fortran = header_value(header, "fortran_order", path) == "True";

  const std::string shape_text = header_value(header, "shape", path);
  std::vector<std::uint64_t> shape;
  std::istringstream numbers(shape_text.substr(1, shape_text.size() - 2));
  for (std::string item; std::getline(numbers, item, ',');) {
    if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoull(item));
  }
  if (shape.size() != 2 && shape.size() != 3) {
    throw std::runtime_error(path.string() + ": expected 2 or 3 dimensions, found shape " +
                             shape_text);
  }
  // x runs fastest in memory: the last axis in C order, the first in Fortran order.
  if (fortran) std::reverse(shape.begin(), shape.end());
  data::Volume volume;
  volume.extent =
      shape.size() == 3 ? Extent3{shape[2], shape[1], shape[0]} : Extent3{shape[1], shape[0], 1};
  const std::uint64_t voxels = volume.extent.voxel_count();
  volume.voxels.resize(voxels);
  // Read in slices so that a 512^3 uint64 volume needs no second full-size buffer.
  std::vector<unsigned char> chunk;
  const std::uint64_t chunk_voxels = 1 << 22;
  for (std::uint64_t first = 0; first < voxels; first += chunk_voxels) {
    const std::uint64_t count = std::min(chunk_voxels, voxels - first);
    chunk.resize(count * item_size);
    in.read(chunk.data(), chunk.size());
    for (std::uint64_t i = 0; i < count; ++i) {
      bool foreground = false;
      for (unsigned byte = 0; byte < item_size; ++byte) foreground |= chunk[i * item_size + byte];
      volume.voxels[first + i] = foreground ? 1 : 0;
    }
  }
  return volume;
}

void write_npy(const fs::path& path, const std::string& descr, unsigned dimensions, Extent3 extent,
               const void* data, std::uint64_t bytes) {
  const std::string shape = (dimensions == 3 ? std::to_string(extent.z) + ", " : std::string()) +
                            std::to_string(extent.y) + ", " + std::to_string(extent.x);
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic, version and header length take 10 bytes; the header ends in '\n' and is padded with
  // spaces so that the data starts at a multiple of 64 bytes.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  write_file(path, [&](std::ostream& out) {
    const char preamble[] = {'\x93',
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             static_cast<char>(header.size() & 0xFF),
                             static_cast<char>(header.size() >> 8)};
    out.write(preamble, sizeof preamble);
    out << header;
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  });
}

}  // namespace volccl::bench
