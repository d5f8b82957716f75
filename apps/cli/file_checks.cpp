#include "file_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

#include <zlib.h>

#include "nifti2_image_io.h"

namespace volccl::cli {
namespace {

std::uint64_t FileSize(const fs::path& file) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(file, error);
  return error ? 0 : static_cast<std::uint64_t>(size);
}

std::uint32_t BigEndian32(const unsigned char* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) << 24 | static_cast<std::uint32_t>(bytes[1]) << 16 |
         static_cast<std::uint32_t>(bytes[2]) << 8 | bytes[3];
}

// Counts the bytes one zlib or gzip stream (`window_bits` as inflateInit2 takes them) expands
// to, without keeping them; stops, failed, once they exceed `limit`.
class Inflater {
 public:
  Inflater(int window_bits, std::uint64_t limit) : limit_(limit) {
    if (inflateInit2(&stream_, window_bits) != Z_OK) failure_ = "zlib cannot start";
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater() { inflateEnd(&stream_); }

  void Feed(const unsigned char* data, std::size_t size) {
    stream_.next_in = const_cast<Bytef*>(data);
    stream_.avail_in = static_cast<uInt>(size);
    while (stream_.avail_in > 0 && !ended_ && failure_.empty()) {
      stream_.next_out = buffer_.data();
      stream_.avail_out = static_cast<uInt>(buffer_.size());
      const int status = inflate(&stream_, Z_NO_FLUSH);
      produced_ += buffer_.size() - stream_.avail_out;
      if (status == Z_STREAM_END) {
        ended_ = true;
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        failure_ = stream_.msg != nullptr ? stream_.msg : "invalid compressed data";
      }
      if (produced_ > limit_) failure_ = "its compressed data expand to more bytes than expected";
    }
  }
  // Empty when the stream ended intact; otherwise why not.
  std::string Failure() const {
    if (!failure_.empty()) return failure_;
    return ended_ ? std::string() : "its compressed data end before their stream does";
  }
  std::uint64_t Produced() const { return produced_; }
  bool Stopped() const { return ended_ || !failure_.empty(); }

 private:
  z_stream stream_{};
  std::uint64_t limit_;
  std::array<unsigned char, 1 << 16> buffer_{};
  std::uint64_t produced_ = 0;
  bool ended_ = false;
  std::string failure_;
};

// Feeds `count` bytes of `stream` (or all to its end when count is the largest value).
void FeedFrom(std::istream& stream, std::uint64_t count, Inflater& inflater) {
  std::vector<char> block(1 << 16);
  while (count > 0 && stream) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(count, block.size()));
    stream.read(block.data(), static_cast<std::streamsize>(want));
    const auto got = static_cast<std::size_t>(stream.gcount());
    if (got == 0) break;
    inflater.Feed(reinterpret_cast<const unsigned char*>(block.data()), got);
    count -= got;
    if (inflater.Stopped()) break;
  }
}

// The bytes the gzip members from `offset` of `file` expand to, read as zlib's gzread reads them
// (the NIfTI and NRRD readers' way): members one after another, each one's CRC and length
// checked, what follows the last one ignored unless it starts like a member. Throws on damage.
std::uint64_t GzipBytes(const fs::path& file, std::uint64_t offset, const std::string& named) {
  const int descriptor = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) {
    throw CommandError("cannot read " + named + ": " + Quoted(file) + ": " + std::strerror(errno));
  }
  if (lseek(descriptor, static_cast<off_t>(offset), SEEK_SET) < 0) {
    close(descriptor);
    throw CommandError("cannot read " + named + ": its gzip data begin past the file's end");
  }
  const gzFile stream = gzdopen(descriptor, "rb");
  if (stream == nullptr) {
    close(descriptor);
    throw CommandError("cannot read " + named + ": zlib cannot open " + Quoted(file));
  }
  std::vector<char> block(1 << 18);
  std::uint64_t total = 0;
  int read = 0;
  while ((read = gzread(stream, block.data(), static_cast<unsigned>(block.size()))) > 0) {
    total += static_cast<std::uint64_t>(read);
  }
  int status = Z_OK;
  const std::string message = gzerror(stream, &status);
  const bool direct = gzdirect(stream) != 0;
  gzclose(stream);
  if (read < 0 || (status != Z_OK && status != Z_STREAM_END)) {
    throw CommandError("cannot read " + named + ": its gzip data are damaged or cut short (" +
                       message + ")");
  }
  if (direct) throw CommandError("cannot read " + named + ": its data are not gzip data");
  return total;
}

// ---- PNG --------------------------------------------------------------------------------------

struct PngHeader {
  std::uint32_t width = 0, height = 0;
  unsigned depth = 0, color = 0, interlace = 0;
};

// The bytes of the filtered image data the header promises (each row's filter byte included),
// over the seven passes of an interlaced image.
std::uint64_t PngRawBytes(const PngHeader& header) {
  const unsigned channels = header.color == 2   ? 3
                            : header.color == 4 ? 2
                            : header.color == 6 ? 4
                                                : 1;
  const auto row_bytes = [&](std::uint64_t width) {
    return width == 0 ? 0 : 1 + (width * channels * header.depth + 7) / 8;
  };
  if (header.interlace == 0) return header.height * row_bytes(header.width);
  static constexpr unsigned start_x[] = {0, 4, 0, 2, 0, 1, 0}, start_y[] = {0, 0, 4, 0, 2, 0, 1};
  static constexpr unsigned step_x[] = {8, 8, 4, 4, 2, 2, 1}, step_y[] = {8, 8, 8, 4, 4, 2, 2};
  std::uint64_t total = 0;
  for (int pass = 0; pass < 7; ++pass) {
    const std::uint64_t width =
        header.width > start_x[pass]
            ? (header.width - start_x[pass] + step_x[pass] - 1) / step_x[pass]
            : 0;
    const std::uint64_t height =
        header.height > start_y[pass]
            ? (header.height - start_y[pass] + step_y[pass] - 1) / step_y[pass]
            : 0;
    if (width != 0 && height != 0) total += height * row_bytes(width);
  }
  return total;
}

std::string PngHeaderProblem(const unsigned char* data) {
  PngHeader header;
  header.width = BigEndian32(data);
  header.height = BigEndian32(data + 4);
  header.depth = data[8];
  header.color = data[9];
  header.interlace = data[12];
  const unsigned depth = header.depth;
  const bool depth_ok =
      header.color == 0   ? depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16
      : header.color == 3 ? depth == 1 || depth == 2 || depth == 4 || depth == 8
      : header.color == 2 || header.color == 4 || header.color == 6 ? depth == 8 || depth == 16
                                                                    : false;
  if (header.width == 0 || header.height == 0 || header.width > 0x7FFFFFFFu ||
      header.height > 0x7FFFFFFFu) {
    return "its IHDR gives a size of " + std::to_string(header.width) + "x" +
           std::to_string(header.height);
  }
  if (!depth_ok || data[10] != 0 || data[11] != 0 || header.interlace > 1) {
    return "its IHDR is invalid (bit depth " + std::to_string(depth) + ", colour type " +
           std::to_string(header.color) + ")";
  }
  return {};
}

// Walks every chunk: libpng reads the ones before the image data without a recovery point in
// ITK's reader, so a damaged one there aborts the program.
void CheckPng(const fs::path& file, const std::string& named) {
  std::ifstream stream(file, std::ios::binary);
  const auto refuse = [&](const std::string& why) {
    throw CommandError("cannot read " + named + ": not a valid PNG file: " + why);
  };
  unsigned char signature[8];
  if (!stream.read(reinterpret_cast<char*>(signature), 8)) refuse("it is shorter than a signature");
  const std::uint64_t size = FileSize(file);
  std::uint64_t position = 8;
  PngHeader header;
  std::uint64_t expected = 0;
  std::optional<Inflater> image_data;
  bool seen_header = false, seen_palette = false, in_image_data = false, image_data_done = false;
  std::vector<unsigned char> data;
  for (;;) {
    unsigned char head[8];
    if (!stream.read(reinterpret_cast<char*>(head), 8)) refuse("it ends without an IEND chunk");
    const std::uint32_t length = BigEndian32(head);
    const std::string type(reinterpret_cast<const char*>(head + 4), 4);
    if (length > 0x7FFFFFFFu || position + 12 + length > size) {
      refuse("its " + std::string(std::isalpha(static_cast<unsigned char>(head[4])) ? type : "") +
             " chunk at byte " + std::to_string(position) + " runs past the file's end");
    }
    if (!std::all_of(type.begin(), type.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; })) {
      refuse("a chunk at byte " + std::to_string(position) + " has an invalid type");
    }
    uLong crc = crc32(0L, head + 4, 4);
    const bool is_image_data = type == "IDAT";
    if (!seen_header && type != "IHDR") refuse("its first chunk is not IHDR");
    if (is_image_data && !in_image_data) {
      if (image_data_done) refuse("its IDAT chunks are not consecutive");
      if (header.color == 3 && !seen_palette) refuse("its palette image has no PLTE chunk");
      in_image_data = true;
    } else if (!is_image_data && in_image_data) {
      in_image_data = false;
      image_data_done = true;
    }
    // Image data are checked in blocks as they stream by; other chunks are small.
    std::uint32_t left = length;
    data.clear();
    while (left > 0) {
      std::array<unsigned char, 1 << 16> block;
      const std::uint32_t want = std::min<std::uint32_t>(left, block.size());
      if (!stream.read(reinterpret_cast<char*>(block.data()), want)) refuse("it is cut short");
      crc = crc32(crc, block.data(), want);
      if (is_image_data) {
        image_data->Feed(block.data(), want);
      } else if (data.size() < 1024) {
        data.insert(data.end(), block.data(), block.data() + std::min<std::uint32_t>(want, 1024));
      }
      left -= want;
    }
    unsigned char stored[4];
    if (!stream.read(reinterpret_cast<char*>(stored), 4)) refuse("it is cut short");
    if (BigEndian32(stored) != (crc & 0xFFFFFFFFu)) {
      refuse("its " + type + " chunk at byte " + std::to_string(position) + " fails its CRC");
    }
    if (type == "IHDR") {
      if (seen_header) refuse("it has two IHDR chunks");
      if (length != 13) refuse("its IHDR chunk is not 13 bytes long");
      const std::string problem = PngHeaderProblem(data.data());
      if (!problem.empty()) refuse(problem);
      header.width = BigEndian32(data.data());
      header.height = BigEndian32(data.data() + 4);
      header.depth = data[8];
      header.color = data[9];
      header.interlace = data[12];
      expected = PngRawBytes(header);
      image_data.emplace(15, expected);
      seen_header = true;
    } else if (type == "PLTE") {
      if (seen_palette || image_data_done || length == 0 || length % 3 != 0 || length > 768 ||
          header.color == 0 || header.color == 4) {
        refuse("its PLTE chunk is invalid");
      }
      seen_palette = true;
    } else if (type == "IEND") {
      break;
    } else if (!is_image_data && std::isupper(static_cast<unsigned char>(type[0]))) {
      refuse("it has an unknown critical chunk " + type);
    }
    position += 12 + static_cast<std::uint64_t>(length);
  }
  if (!image_data_done && !in_image_data) refuse("it has no IDAT chunk");
  const std::string failure = image_data->Failure();
  if (!failure.empty() || image_data->Produced() != expected) {
    refuse("its image data " + (failure.empty()
                                    ? "expand to " + std::to_string(image_data->Produced()) +
                                          " bytes, its size takes " + std::to_string(expected)
                                    : "are damaged (" + failure + ")"));
  }
}

// ---- NIfTI ------------------------------------------------------------------------------------

// The first bytes of a NIfTI-1 or NIfTI-2 header, and whether they were swapped.
struct NiftiHeader {
  bool valid = false;
  bool version2 = false;
  bool single_file = false;  // "n+1" or "n+2": the voxels follow the header in the same file
  std::array<std::int64_t, 8> dim{};
  double vox_offset = 0;
};

template <typename T>
T Field(const unsigned char* bytes, bool swapped) {
  unsigned char copy[sizeof(T)];
  std::memcpy(copy, bytes, sizeof(T));
  if (swapped) std::reverse(copy, copy + sizeof(T));
  T value;
  std::memcpy(&value, copy, sizeof(T));
  return value;
}

NiftiHeader ReadNiftiHeader(const fs::path& file) {
  unsigned char bytes[544] = {};
  const gzFile stream = gzopen(file.c_str(), "rb");  // reads plain files as they are
  if (stream == nullptr) return {};
  const int read = gzread(stream, bytes, sizeof bytes);
  gzclose(stream);
  NiftiHeader header;
  const auto size = Field<std::int32_t>(bytes, false);
  const auto swapped_size = Field<std::int32_t>(bytes, true);
  const bool swapped = swapped_size == 348 || swapped_size == 540;
  const std::int32_t header_size = swapped ? swapped_size : size;
  if (header_size == 348 && read >= 348) {
    for (int i = 0; i < 8; ++i) header.dim[i] = Field<std::int16_t>(bytes + 40 + 2 * i, swapped);
    header.vox_offset = Field<float>(bytes + 108, swapped);
    header.single_file = std::memcmp(bytes + 344, "n+1", 4) == 0;
    header.valid = true;
  } else if (header_size == 540 && read >= 540) {
    for (int i = 0; i < 8; ++i) header.dim[i] = Field<std::int64_t>(bytes + 16 + 8 * i, swapped);
    header.vox_offset = static_cast<double>(Field<std::int64_t>(bytes + 168, swapped));
    header.single_file = std::memcmp(bytes + 4, "n+2", 4) == 0;
    header.version2 = true;
    header.valid = true;
  }
  return header;
}

// GzipBytes of a .nii.gz, expanded once although it is checked before and after ITK reads its
// header.
std::uint64_t NiftiGzipBytes(const fs::path& file, const std::string& named) {
  static std::vector<std::pair<fs::path, std::uint64_t>> expanded;
  for (const auto& [path, bytes] : expanded) {
    if (path == file) return bytes;
  }
  const std::uint64_t bytes = GzipBytes(file, 0, named);
  expanded.emplace_back(file, bytes);
  return bytes;
}

// niftilib reads a side of 0 as 1, and ITK takes dim[0] outside 1..7 as it comes.
void CheckNiftiHeader(const fs::path& file, const std::string& named) {
  unsigned char magic[2] = {0, 0};
  std::ifstream(file, std::ios::binary).read(reinterpret_cast<char*>(magic), 2);
  if (magic[0] == 0x1f && magic[1] == 0x8b) NiftiGzipBytes(file, named);  // niftilib: no CRC
  const NiftiHeader header = ReadNiftiHeader(file);
  if (!header.valid) return;  // ITK's reader says what is wrong
  const std::int64_t dimensions = header.dim[0];
  if (dimensions < 1 || dimensions > 7) {
    throw CommandError("cannot read " + named + ": its NIfTI header has dim[0] = " +
                       std::to_string(dimensions) + ", not 1 to 7");
  }
  for (std::int64_t i = 1; i <= dimensions; ++i) {
    if (header.dim[i] < 1) {
      throw CommandError("cannot read " + named + ": its NIfTI header gives dimension " +
                         std::to_string(i) + " a size of " + std::to_string(header.dim[i]) +
                         "; every side must be at least 1");
    }
  }
  if (header.single_file &&
      !(header.vox_offset >= (header.version2 ? 544 : 352) && header.vox_offset < 9.2e18)) {
    throw CommandError("cannot read " + named + ": its NIfTI header's vox_offset " +
                       std::to_string(header.vox_offset) + " does not lie after the header");
  }
}

// The header's vox_offset plus the voxels' bytes must be there: ITK's reader fills what a short
// file lacks with zeros, and a damaged gzip member's CRC is not its concern.
void CheckNiftiData(const fs::path& file, const std::string& named, std::uint64_t data_bytes) {
  const NiftiHeader header = ReadNiftiHeader(file);
  if (!header.valid || !header.single_file) return;
  const std::uint64_t expected = static_cast<std::uint64_t>(header.vox_offset) + data_bytes;
  unsigned char magic[2] = {0, 0};
  std::ifstream(file, std::ios::binary).read(reinterpret_cast<char*>(magic), 2);
  const bool gzipped = magic[0] == 0x1f && magic[1] == 0x8b;
  const std::uint64_t actual = gzipped ? NiftiGzipBytes(file, named) : FileSize(file);
  if (actual < expected) {
    throw CommandError("cannot read " + named + ": it holds " + std::to_string(actual) + " bytes" +
                       (gzipped ? " once expanded" : "") + ", its header promises " +
                       std::to_string(expected) + "; the file is truncated");
  }
}

// ---- MetaImage and NRRD -----------------------------------------------------------------------

// The header fields of a MetaImage (`Key = value` up to ElementDataFile) or NRRD (`key: value`
// up to the first blank line), keys lowered, and the byte at which the header ends.
struct TextHeader {
  std::vector<std::pair<std::string, std::string>> fields;
  std::uint64_t end = 0;
  std::string Value(const std::string& key) const {
    for (const auto& [name, value] : fields) {
      if (name == key) return value;
    }
    return {};
  }
  bool Has(const std::string& key) const {
    return std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return f.first == key; });
  }
};

TextHeader ReadTextHeader(const fs::path& file, bool nrrd) {
  std::ifstream stream(file, std::ios::binary);
  TextHeader header;
  std::string line;
  std::uint64_t position = 0;
  while (position < (1u << 20) && std::getline(stream, line)) {
    position += line.size() + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (nrrd && line.empty()) break;
    if (nrrd && line.rfind('#', 0) == 0) continue;
    const std::size_t separator = nrrd ? line.find(':') : line.find_first_of("=:");
    if (separator == std::string::npos) continue;
    if (nrrd && separator + 1 < line.size() && line[separator + 1] == '=') continue;
    const std::string key = Lowered(Trimmed(line.substr(0, separator)));
    header.fields.emplace_back(key, Trimmed(line.substr(separator + 1)));
    if (!nrrd && key == "elementdatafile") break;
  }
  header.end = position;
  return header;
}

// The data files a header names, as InputFiles found and checked them (none: the voxels follow
// the header).
std::vector<fs::path> DataFiles(const fs::path& file, const std::string& named) {
  std::vector<fs::path> files = InputFiles(file, named);
  files.erase(files.begin());
  return files;
}

std::string Truncated(const std::string& named, std::uint64_t actual, std::uint64_t expected,
                      bool compressed) {
  return "cannot read " + named + ": it holds " + std::to_string(actual) + " bytes of voxels" +
         (compressed ? " once expanded" : "") + ", its header promises " +
         std::to_string(expected) + "; the file is truncated";
}

// MetaIO warns on stderr about a short or damaged stream and labels what it got.
void CheckMetaImageData(const fs::path& file, const std::string& named, std::uint64_t data_bytes) {
  const TextHeader header = ReadTextHeader(file, false);
  const std::string compressed_field = Lowered(header.Value("compresseddata"));
  const bool compressed = compressed_field == "true";
  const std::string data_file = Lowered(header.Value("elementdatafile"));
  if (header.Has("headersize") || data_file.empty()) return;  // ITK's reader says what is wrong
  std::vector<fs::path> files;
  std::uint64_t start = 0;
  if (data_file == "local") {
    files.push_back(file);
    start = header.end;
  } else {
    files = DataFiles(file, named);
  }
  if (!compressed) {
    std::uint64_t actual = 0;
    for (const fs::path& data : files) {
      if (!fs::is_regular_file(data)) {
        throw CommandError("cannot read " + named + ": its data file " + Quoted(data) +
                           " does not exist");
      }
      actual += FileSize(data) - std::min(FileSize(data), start);
    }
    if (actual < data_bytes) throw CommandError(Truncated(named, actual, data_bytes, false));
    return;
  }
  // MetaIO reads CompressedDataSize bytes (the whole data file when absent); inside the header's
  // file it needs the size, or misreads the stream.
  const bool sized = header.Has("compresseddatasize");
  if (data_file == "local" && !sized) {
    throw CommandError("cannot read " + named +
                       ": its compressed voxels lack a CompressedDataSize, without which ITK's "
                       "MetaImage reader misreads them");
  }
  std::uint64_t actual = 0;
  for (const fs::path& data : files) {
    if (!fs::is_regular_file(data)) {
      throw CommandError("cannot read " + named + ": its data file " + Quoted(data) +
                         " does not exist");
    }
    std::uint64_t count = FileSize(data) - std::min(FileSize(data), start);
    if (sized && files.size() == 1) {
      const std::uint64_t declared = std::stoull(header.Value("compresseddatasize"));
      if (declared > count) {
        throw CommandError("cannot read " + named + ": its CompressedDataSize is " +
                           std::to_string(declared) + " bytes, the file holds " +
                           std::to_string(count) + "; the file is truncated");
      }
      count = declared;
    }
    std::ifstream stream(data, std::ios::binary);
    stream.seekg(static_cast<std::streamoff>(start));
    Inflater inflater(15 + 32, data_bytes);  // MetaIO takes zlib and gzip streams
    FeedFrom(stream, count, inflater);
    if (!inflater.Failure().empty()) {
      throw CommandError("cannot read " + named +
                         ": its compressed voxels are damaged or cut "
                         "short (" +
                         inflater.Failure() + ")");
    }
    actual += inflater.Produced();
  }
  if (actual != data_bytes) throw CommandError(Truncated(named, actual, data_bytes, true));
}

// Teem warns about a gzip member's bad CRC, and reads what a short raw file holds.
void CheckNrrdData(const fs::path& file, const std::string& named, std::uint64_t data_bytes) {
  const TextHeader header = ReadTextHeader(file, true);
  const std::string encoding = Lowered(header.Value("encoding"));
  const bool gzipped = encoding == "gzip" || encoding == "gz";
  if (!gzipped && encoding != "raw") return;  // text, hex and bzip2 fail loudly when short
  std::vector<fs::path> files = DataFiles(file, named);
  std::uint64_t start = 0;
  if (files.empty()) {
    files.push_back(file);
    start = header.end;
  }
  long long line_skip = 0, byte_skip = 0;
  try {
    if (header.Has("line skip") || header.Has("lineskip")) {
      line_skip = std::stoll(header.Value(header.Has("line skip") ? "line skip" : "lineskip"));
    }
    if (header.Has("byte skip") || header.Has("byteskip")) {
      byte_skip = std::stoll(header.Value(header.Has("byte skip") ? "byte skip" : "byteskip"));
    }
  } catch (const std::exception&) {
    throw CommandError("cannot read " + named + ": its line skip or byte skip is not an integer");
  }
  if (line_skip < 0 || byte_skip < -1 || (gzipped && byte_skip < 0)) {
    throw CommandError("cannot read " + named + ": its line skip or byte skip is invalid");
  }
  std::uint64_t actual = 0;
  for (const fs::path& data : files) {
    if (!fs::is_regular_file(data)) {
      throw CommandError("cannot read " + named + ": its data file " + Quoted(data) +
                         " does not exist");
    }
    std::uint64_t offset = start;
    if (line_skip > 0) {
      std::ifstream stream(data, std::ios::binary);
      stream.seekg(static_cast<std::streamoff>(start));
      std::string skipped;
      for (long long i = 0; i < line_skip && std::getline(stream, skipped); ++i) {
        offset += skipped.size() + 1;
      }
    }
    const std::uint64_t size = FileSize(data);
    std::uint64_t bytes = gzipped ? GzipBytes(data, offset, named) : size - std::min(size, offset);
    if (byte_skip > 0)
      bytes -= std::min<std::uint64_t>(bytes, static_cast<std::uint64_t>(byte_skip));
    actual += bytes;
  }
  if (actual < data_bytes) throw CommandError(Truncated(named, actual, data_bytes, gzipped));
}

}  // namespace

void CheckBeforeReading(const fs::path& file, const std::string& named) {
  unsigned char magic[8] = {};
  std::ifstream(file, std::ios::binary).read(reinterpret_cast<char*>(magic), 8);
  static constexpr unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (std::equal(png, png + 8, magic)) {
    CheckPng(file, named);
  } else if (IsNiftiName(file)) {
    CheckNiftiHeader(file, named);
  }
}

void CheckVoxelData(const fs::path& file, const std::string& named, const std::string& format,
                    std::uint64_t data_bytes) {
  if (format == "NiftiImageIO") {
    CheckNiftiData(file, named, data_bytes);
  } else if (format == "MetaImageIO") {
    CheckMetaImageData(file, named, data_bytes);
  } else if (format == "NrrdImageIO") {
    CheckNrrdData(file, named, data_bytes);
  }
}

LibraryMessages::LibraryMessages() {
  std::fflush(stderr);
  sink_ = std::tmpfile();
  if (sink_ == nullptr) return;
  saved_stderr_ = dup(STDERR_FILENO);
  if (saved_stderr_ < 0 || dup2(fileno(sink_), STDERR_FILENO) < 0) {
    if (saved_stderr_ >= 0) close(saved_stderr_);
    saved_stderr_ = -1;
    std::fclose(sink_);
    sink_ = nullptr;
  }
}

LibraryMessages::~LibraryMessages() {
  if (sink_ == nullptr) return;
  std::fflush(stderr);
  dup2(saved_stderr_, STDERR_FILENO);
  close(saved_stderr_);
  std::fclose(sink_);
}

}  // namespace volccl::cli
