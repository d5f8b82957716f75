#include "nifti2_image_io.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "command_support.h"

namespace volccl::cli {
namespace {

using Component = itk::IOComponentEnum;

constexpr int kHeaderBytes = 540;
constexpr std::int64_t kDataOffset = 544;  // the header, then 4 bytes saying "no extensions"
constexpr char kMagic[8] = {'n', '+', '2', '\0', '\r', '\n', '\032', '\n'};
constexpr std::int32_t kScannerAnatomical = 1;  // NIFTI_XFORM_SCANNER_ANAT
constexpr std::int32_t kMillimetresAndSeconds = 2 | 8;

// The header's fields, by their offsets in NIfTI-2's 540 bytes.
enum Offset : int {
  kSizeOfHeader = 0,
  kMagicBytes = 4,
  kDataType = 12,
  kBitsPerVoxel = 14,
  kDim = 16,
  kPixdim = 104,
  kVoxOffset = 168,
  kSclSlope = 176,
  kSclInter = 184,
  kDescrip = 240,
  kQformCode = 344,
  kSformCode = 348,
  kQuaternB = 352,
  kQoffsetX = 376,
  kSrowX = 400,
  kXyztUnits = 500,
};

struct DataType {
  std::int16_t code;
  Component component;
  int bytes;
};
constexpr DataType kDataTypes[] = {{2, Component::UCHAR, 1},       {4, Component::SHORT, 2},
                                   {8, Component::INT, 4},         {16, Component::FLOAT, 4},
                                   {64, Component::DOUBLE, 8},     {256, Component::CHAR, 1},
                                   {512, Component::USHORT, 2},    {768, Component::UINT, 4},
                                   {1024, Component::LONGLONG, 8}, {1280, Component::ULONGLONG, 8}};

const DataType* DataTypeOfCode(std::int16_t code) {
  for (const DataType& type : kDataTypes) {
    if (type.code == code) return &type;
  }
  return nullptr;
}

const DataType* DataTypeOfComponent(Component component) {
  // ITK's LONG and ULONG are 64-bit on the platforms volccl builds for, as LONGLONG.
  if (component == Component::LONG) component = Component::LONGLONG;
  if (component == Component::ULONG) component = Component::ULONGLONG;
  for (const DataType& type : kDataTypes) {
    if (type.component == component) return &type;
  }
  return nullptr;
}

// The header's bytes, read and written in the file's byte order.
class HeaderBytes {
 public:
  explicit HeaderBytes(bool swapped = false) : swapped_(swapped) {}
  unsigned char* data() { return bytes_; }
  void set_swapped(bool swapped) { swapped_ = swapped; }
  bool swapped() const { return swapped_; }

  template <typename T>
  T Get(int offset) const {
    unsigned char copy[sizeof(T)];
    std::memcpy(copy, bytes_ + offset, sizeof(T));
    if (swapped_) std::reverse(copy, copy + sizeof(T));
    T value;
    std::memcpy(&value, copy, sizeof(T));
    return value;
  }
  template <typename T>
  void Put(int offset, T value) {
    std::memcpy(bytes_ + offset, &value, sizeof(T));
  }

 private:
  unsigned char bytes_[kHeaderBytes] = {};
  bool swapped_;
};

// A gzip stream, or a plain file read through zlib (which passes it through) or written by it
// uncompressed; closed on destruction.
class NiftiStream {
 public:
  NiftiStream(const std::string& path, const char* mode) {
    stream_ = gzopen(path.c_str(), mode);
    if (stream_ != nullptr) gzbuffer(stream_, 1 << 20);
  }
  NiftiStream(const NiftiStream&) = delete;
  NiftiStream& operator=(const NiftiStream&) = delete;
  ~NiftiStream() {
    if (stream_ != nullptr) gzclose(stream_);
  }
  bool is_open() const { return stream_ != nullptr; }

  // Reads `bytes` in pieces that zlib's int counts hold; false when the file ends first.
  bool Read(void* destination, std::uint64_t bytes) {
    auto* out = static_cast<unsigned char*>(destination);
    while (bytes > 0) {
      const unsigned piece = static_cast<unsigned>(std::min<std::uint64_t>(bytes, kPiece));
      const int read = gzread(stream_, out, piece);
      if (read <= 0) return false;
      out += read;
      bytes -= static_cast<unsigned>(read);
    }
    return true;
  }
  bool Skip(std::uint64_t bytes) {
    return gzseek(stream_, static_cast<z_off_t>(bytes), SEEK_CUR) >= 0;
  }
  bool Write(const void* source, std::uint64_t bytes) {
    const auto* in = static_cast<const unsigned char*>(source);
    while (bytes > 0) {
      const unsigned piece = static_cast<unsigned>(std::min<std::uint64_t>(bytes, kPiece));
      if (gzwrite(stream_, in, piece) != static_cast<int>(piece)) return false;
      in += piece;
      bytes -= piece;
    }
    return true;
  }
  // Flushes and closes; false when that fails (a full disk).
  bool Close() {
    const int status = gzclose(stream_);
    stream_ = nullptr;
    return status == Z_OK;
  }
  std::string Error() const {
    int code = Z_OK;
    const char* message = stream_ != nullptr ? gzerror(stream_, &code) : nullptr;
    if (code == Z_ERRNO || message == nullptr || *message == '\0') return std::strerror(errno);
    return message;
  }

 private:
  static constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
  gzFile stream_ = nullptr;
};

bool EndsWith(const std::string& text, const std::string& end) {
  return text.size() > end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// Reads the 540 bytes of a NIfTI-2 header; false when the file is not one.
bool ReadHeader(const std::string& path, HeaderBytes& header) {
  NiftiStream stream(path, "rb");
  if (!stream.is_open() || !stream.Read(header.data(), kHeaderBytes)) return false;
  header.set_swapped(false);
  if (header.Get<std::int32_t>(kSizeOfHeader) != kHeaderBytes) {
    header.set_swapped(true);
    if (header.Get<std::int32_t>(kSizeOfHeader) != kHeaderBytes) return false;
  }
  return std::memcmp(header.data() + kMagicBytes, "n+2", 4) == 0 ||
         std::memcmp(header.data() + kMagicBytes, "ni2", 4) == 0;
}

using Matrix3 = std::array<std::array<double, 3>, 3>;

// The rotation of a unit quaternion (b, c, d; a from them), as niftilib's
// nifti_quatern_to_mat44 builds it.
Matrix3 QuaternionRotation(double b, double c, double d) {
  double a = 1.0 - (b * b + c * c + d * d);
  if (a < 1e-7) {  // a is 0: normalize (b, c, d)
    const double norm = std::sqrt(b * b + c * c + d * d);
    b /= norm;
    c /= norm;
    d /= norm;
    a = 0;
  } else {
    a = std::sqrt(a);
  }
  return {{{a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)},
           {2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)},
           {2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b}}};
}

// The quaternion (b, c, d) of a proper rotation, as niftilib's nifti_mat44_to_quatern finds it.
std::array<double, 3> RotationQuaternion(const Matrix3& r) {
  double a = r[0][0] + r[1][1] + r[2][2] + 1;
  double b = 0, c = 0, d = 0;
  if (a > 0.5) {
    a = 0.5 * std::sqrt(a);
    b = 0.25 * (r[2][1] - r[1][2]) / a;
    c = 0.25 * (r[0][2] - r[2][0]) / a;
    d = 0.25 * (r[1][0] - r[0][1]) / a;
  } else {
    const double xd = 1 + r[0][0] - (r[1][1] + r[2][2]);
    const double yd = 1 + r[1][1] - (r[0][0] + r[2][2]);
    const double zd = 1 + r[2][2] - (r[0][0] + r[1][1]);
    if (xd > 1) {
      b = 0.5 * std::sqrt(xd);
      c = 0.25 * (r[0][1] + r[1][0]) / b;
      d = 0.25 * (r[0][2] + r[2][0]) / b;
      a = 0.25 * (r[2][1] - r[1][2]) / b;
    } else if (yd > 1) {
      c = 0.5 * std::sqrt(yd);
      b = 0.25 * (r[0][1] + r[1][0]) / c;
      d = 0.25 * (r[1][2] + r[2][1]) / c;
      a = 0.25 * (r[0][2] - r[2][0]) / c;
    } else {
      d = 0.5 * std::sqrt(zd);
      b = 0.25 * (r[0][2] + r[2][0]) / d;
      c = 0.25 * (r[1][2] + r[2][1]) / d;
      a = 0.25 * (r[1][0] - r[0][1]) / d;
    }
    if (a < 0) {
      b = -b;
      c = -c;
      d = -d;
    }
  }
  return {b, c, d};
}

double Determinant(const Matrix3& m) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// Whether the direction, origin and spacing of the first `axes` axes are usable: finite and
// within float's range (what NIfTI-1 and ITK's readers take), and the direction not singular.
// Subnormal direction entries become 0: vnl's SVD, which ITK inverts the direction with, takes
// them for a failure.
bool MapsToSpace(Matrix3& direction, const std::array<double, 3>& origin,
                 const itk::ImageIOBase* io, unsigned axes) {
  const auto usable = [](double value) {
    return std::abs(value) <= std::numeric_limits<float>::max();  // false for NaN
  };
  for (unsigned row = 0; row < 3; ++row) {
    if (!usable(origin[row])) return false;
    for (unsigned column = 0; column < 3; ++column) {
      double& entry = direction[row][column];
      if (!usable(entry)) return false;
      if (std::abs(entry) < std::numeric_limits<double>::min()) entry = 0;
    }
  }
  for (unsigned axis = 0; axis < axes; ++axis) {
    const double spacing = io->GetSpacing(axis);
    if (!(spacing > 0) || !usable(spacing)) return false;
  }
  Matrix3 block{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  for (unsigned row = 0; row < axes; ++row) {
    for (unsigned column = 0; column < axes; ++column) block[row][column] = direction[row][column];
  }
  return std::abs(Determinant(block)) > 1e-6;
}

void SwapEach(unsigned char* bytes, std::uint64_t count, int size) {
  if (size == 1) return;
  for (std::uint64_t i = 0; i < count; ++i) std::reverse(bytes + i * size, bytes + (i + 1) * size);
}

template <typename T>
void Scale(const unsigned char* stored, std::uint64_t count, double slope, double intercept,
           double* out) {
  for (std::uint64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, stored + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(value) * slope + intercept;
  }
}

void ScaleAll(Component type, const unsigned char* stored, std::uint64_t count, double slope,
              double intercept, double* out) {
  switch (type) {
    case Component::UCHAR:
      return Scale<std::uint8_t>(stored, count, slope, intercept, out);
    case Component::CHAR:
      return Scale<std::int8_t>(stored, count, slope, intercept, out);
    case Component::USHORT:
      return Scale<std::uint16_t>(stored, count, slope, intercept, out);
    case Component::SHORT:
      return Scale<std::int16_t>(stored, count, slope, intercept, out);
    case Component::UINT:
      return Scale<std::uint32_t>(stored, count, slope, intercept, out);
    case Component::INT:
      return Scale<std::int32_t>(stored, count, slope, intercept, out);
    case Component::ULONGLONG:
      return Scale<std::uint64_t>(stored, count, slope, intercept, out);
    case Component::LONGLONG:
      return Scale<std::int64_t>(stored, count, slope, intercept, out);
    case Component::FLOAT:
      return Scale<float>(stored, count, slope, intercept, out);
    default:
      return Scale<double>(stored, count, slope, intercept, out);
  }
}

// The messages of the exceptions: the reason alone, which the caller prefixes with the file.
class Text {
 public:
  template <typename T>
  Text& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  std::string str() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
};

[[noreturn]] void Fail(const Text& why) {
  throw itk::ExceptionObject(__FILE__, __LINE__, why.str(), ITK_LOCATION);
}

}  // namespace

bool IsNiftiName(const std::filesystem::path& path) {
  const std::string name = Lowered(path.filename().string());
  return EndsWith(name, ".nii") || EndsWith(name, ".nii.gz");
}

bool NiftiOneHolds(const std::uint64_t* sides, unsigned dimension) {
  return std::all_of(sides, sides + dimension, [](std::uint64_t side) { return side <= 32767; });
}

Nifti2ImageIO::Nifti2ImageIO() {
  for (const char* extension : {".nii", ".nii.gz"}) {
    AddSupportedReadExtension(extension);
    AddSupportedWriteExtension(extension);
  }
}

bool Nifti2ImageIO::CanReadFile(const char* file_name) {
  HeaderBytes header;
  return file_name != nullptr && IsNiftiName(file_name) && ReadHeader(file_name, header);
}

void Nifti2ImageIO::ReadImageInformation() {
  HeaderBytes header;
  if (!ReadHeader(m_FileName, header)) {
    Fail(Text() << "not a NIfTI-2 file");
  }
  if (std::memcmp(header.data() + kMagicBytes, "n+2", 4) != 0) {
    Fail(Text() << "its NIfTI-2 header keeps the voxels in a separate "
                   ".img file; volccl reads single .nii files");
  }
  swapped_ = header.swapped();
  const std::int64_t dimensions = header.Get<std::int64_t>(kDim);
  if (dimensions < 1 || dimensions > 7) {
    Fail(Text() << "its NIfTI-2 header has dim[0] = " << dimensions << ", not 1 to 7");
  }
  const DataType* type = DataTypeOfCode(header.Get<std::int16_t>(kDataType));
  if (type == nullptr) {
    Fail(Text() << "NIfTI datatype " << header.Get<std::int16_t>(kDataType)
                << " is not a scalar type volccl reads");
  }
  stored_type_ = type->component;
  data_offset_ = header.Get<std::int64_t>(kVoxOffset);
  if (data_offset_ < kDataOffset) {
    Fail(Text() << "its NIfTI-2 vox_offset " << data_offset_ << " lies inside the header");
  }
  const double slope = header.Get<double>(kSclSlope);
  const double intercept = header.Get<double>(kSclInter);
  scaled_ = std::isfinite(slope) && std::isfinite(intercept) && slope != 0 &&
            (slope != 1 || intercept != 0);
  slope_ = scaled_ ? slope : 1;
  intercept_ = scaled_ ? intercept : 0;

  const auto count = static_cast<unsigned>(dimensions);
  SetNumberOfDimensions(count);
  SetPixelType(itk::IOPixelEnum::SCALAR);
  SetNumberOfComponents(1);
  SetComponentType(scaled_ ? Component::DOUBLE : stored_type_);
  for (unsigned i = 0; i < count; ++i) {
    const std::int64_t side = header.Get<std::int64_t>(kDim + 8 * (i + 1));
    if (side < 1) {
      Fail(Text() << "its NIfTI-2 header gives dimension " << i + 1 << " a size of " << side);
    }
    SetDimensions(i, static_cast<itk::SizeValueType>(side));
    const double pixdim = std::abs(header.Get<double>(kPixdim + 8 * (i + 1)));
    SetSpacing(i, pixdim > 0 && pixdim <= std::numeric_limits<float>::max() ? pixdim : 1.0);
  }

  // The index-to-world mapping of the first three axes in RAS+.
  Matrix3 ras{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  std::array<double, 3> ras_origin{0, 0, 0};
  if (header.Get<std::int32_t>(kSformCode) > 0) {
    for (int row = 0; row < 3; ++row) {
      for (int column = 0; column < 3; ++column) {
        ras[row][column] = header.Get<double>(kSrowX + 32 * row + 8 * column);
      }
      ras_origin[row] = header.Get<double>(kSrowX + 32 * row + 24);
    }
    for (int column = 0; column < 3; ++column) {
      double norm = 0;
      for (int row = 0; row < 3; ++row) norm += ras[row][column] * ras[row][column];
      norm = std::sqrt(norm);
      if (norm == 0) continue;
      for (int row = 0; row < 3; ++row) ras[row][column] /= norm;
      if (static_cast<unsigned>(column) < count) SetSpacing(column, norm);
    }
  } else if (header.Get<std::int32_t>(kQformCode) > 0) {
    ras = QuaternionRotation(header.Get<double>(kQuaternB), header.Get<double>(kQuaternB + 8),
                             header.Get<double>(kQuaternB + 16));
    const double qfac = header.Get<double>(kPixdim) < 0 ? -1.0 : 1.0;
    for (int row = 0; row < 3; ++row) ras[row][2] *= qfac;
    for (int i = 0; i < 3; ++i) ras_origin[i] = header.Get<double>(kQoffsetX + 8 * i);
  }
  const char* form = header.Get<std::int32_t>(kSformCode) > 0   ? "sform"
                     : header.Get<std::int32_t>(kQformCode) > 0 ? "qform"
                                                                : "pixdim";
  if (!MapsToSpace(ras, ras_origin, this, std::min(count, 3u))) {
    Fail(Text() << "its NIfTI-2 " << form
                << " does not map the voxels to space (a value that is not "
                   "finite or beyond float range, or a singular matrix)");
  }
  // RAS+ to LPS+: x and y change sign.
  for (unsigned axis = 0; axis < count; ++axis) {
    std::vector<double> direction(count, 0.0);
    for (unsigned row = 0; row < count; ++row) {
      if (axis < 3 && row < 3) {
        direction[row] = (row < 2 ? -1.0 : 1.0) * ras[row][axis];
      } else {
        direction[row] = row == axis ? 1.0 : 0.0;
      }
    }
    SetDirection(axis, direction);
    SetOrigin(axis, axis < 3 ? (axis < 2 ? -1.0 : 1.0) * ras_origin[axis] : 0.0);
  }
}

void Nifti2ImageIO::Read(void* buffer) {
  const DataType* type = DataTypeOfComponent(stored_type_);
  std::uint64_t voxels = 1;
  for (unsigned i = 0; i < GetNumberOfDimensions(); ++i) voxels *= GetDimensions(i);
  const std::uint64_t bytes = voxels * static_cast<std::uint64_t>(type->bytes);
  NiftiStream stream(m_FileName, "rb");
  if (!stream.is_open() || !stream.Skip(static_cast<std::uint64_t>(data_offset_))) {
    Fail(Text() << stream.Error());
  }
  std::vector<unsigned char> stored;
  unsigned char* destination = static_cast<unsigned char*>(buffer);
  if (scaled_) {
    stored.resize(bytes);
    destination = stored.data();
  }
  if (!stream.Read(destination, bytes)) {
    Fail(Text() << "it ends before its " << bytes << " bytes of voxels");
  }
  if (swapped_) SwapEach(destination, voxels, type->bytes);
  if (scaled_) {
    ScaleAll(stored_type_, stored.data(), voxels, slope_, intercept_, static_cast<double*>(buffer));
  }
}

bool Nifti2ImageIO::CanWriteFile(const char* file_name) {
  return file_name != nullptr && IsNiftiName(file_name);
}

void Nifti2ImageIO::Write(const void* buffer) {
  const unsigned count = GetNumberOfDimensions();
  const DataType* type = DataTypeOfComponent(GetComponentType());
  if (GetNumberOfComponents() != 1 || type == nullptr || count < 1 || count > 7) {
    Fail(Text() << "NIfTI-2 files here hold 1 to 7 "
                   "dimensions of scalar integer or float voxels");
  }
  HeaderBytes header;
  header.Put<std::int32_t>(kSizeOfHeader, kHeaderBytes);
  std::memcpy(header.data() + kMagicBytes, kMagic, sizeof kMagic);
  header.Put<std::int16_t>(kDataType, type->code);
  header.Put<std::int16_t>(kBitsPerVoxel, static_cast<std::int16_t>(8 * type->bytes));
  header.Put<std::int64_t>(kDim, count);
  std::uint64_t voxels = 1;
  for (unsigned i = 0; i < 7; ++i) {
    const std::uint64_t side = i < count ? GetDimensions(i) : 1;
    voxels *= side;
    header.Put<std::int64_t>(kDim + 8 * (i + 1), static_cast<std::int64_t>(side));
    header.Put<double>(kPixdim + 8 * (i + 1), i < count ? GetSpacing(i) : 1.0);
  }
  header.Put<std::int64_t>(kVoxOffset, kDataOffset);
  header.Put<double>(kSclSlope, 1.0);
  header.Put<double>(kSclInter, 0.0);
  std::strncpy(reinterpret_cast<char*>(header.data() + kDescrip), "volccl", 80);
  header.Put<std::int32_t>(kXyztUnits, kMillimetresAndSeconds);

  // The direction of the first three axes in RAS+ (identity beyond the image's axes), then
  // the affine with the spacing, and the qform's proper rotation with qfac.
  Matrix3 ras{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  std::array<double, 3> ras_origin{0, 0, 0};
  std::array<double, 3> spacing{1, 1, 1};
  for (unsigned axis = 0; axis < std::min(count, 3u); ++axis) {
    const std::vector<double> direction = GetDirection(axis);
    for (unsigned row = 0; row < 3; ++row) {
      const double lps = row < count ? direction[row] : (row == axis ? 1.0 : 0.0);
      ras[row][axis] = (row < 2 ? -1.0 : 1.0) * lps;
    }
    ras_origin[axis] = (axis < 2 ? -1.0 : 1.0) * GetOrigin(axis);
    spacing[axis] = GetSpacing(axis);
  }
  header.Put<std::int32_t>(kSformCode, kScannerAnatomical);
  for (int row = 0; row < 3; ++row) {
    for (int column = 0; column < 3; ++column) {
      header.Put<double>(kSrowX + 32 * row + 8 * column, ras[row][column] * spacing[column]);
    }
    header.Put<double>(kSrowX + 32 * row + 24, ras_origin[row]);
  }
  const double qfac = Determinant(ras) < 0 ? -1.0 : 1.0;
  Matrix3 rotation = ras;
  for (int row = 0; row < 3; ++row) rotation[row][2] *= qfac;
  const std::array<double, 3> quaternion = RotationQuaternion(rotation);
  header.Put<std::int32_t>(kQformCode, kScannerAnatomical);
  header.Put<double>(kPixdim, qfac);
  for (int i = 0; i < 3; ++i) {
    header.Put<double>(kQuaternB + 8 * i, quaternion[i]);
    header.Put<double>(kQoffsetX + 8 * i, ras_origin[i]);
  }

  const bool compressed = EndsWith(Lowered(m_FileName), ".gz");
  NiftiStream stream(m_FileName, compressed ? "wb6" : "wbT");
  const unsigned char no_extensions[4] = {0, 0, 0, 0};
  const bool written = stream.is_open() && stream.Write(header.data(), kHeaderBytes) &&
                       stream.Write(no_extensions, sizeof no_extensions) &&
                       stream.Write(buffer, voxels * static_cast<std::uint64_t>(type->bytes));
  const std::string error = written ? "" : stream.Error();
  if (!stream.Close() || !written) {
    Fail(Text() << (error.empty() ? std::strerror(errno) : error));
  }
}

}  // namespace volccl::cli
