// volccl._volccl: the Python package's bindings to the public API (nanobind). The arrays come
// as DLPack tensors, in host memory or on a CUDA device, already C-contiguous and of the dtypes
// asked for: python/volccl/__init__.py prepares them, so nothing here copies or converts, and
// the labels are written into the caller's array. Plain C++17 on the public headers only.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "volccl/cuda.h"
#include "volccl/volccl.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// A mask as the caller holds it: bytes of any 8-bit dtype (bool, uint8, int8), non-zero the
// foreground, so that no view of another dtype has to be made first.
using MaskArray = nb::ndarray<nb::ro, nb::c_contig>;
using LabelArray = nb::ndarray<std::uint32_t, nb::c_contig>;
// Labels of either width: uint64 in host memory, where label() numbers more than 2^32 - 1
// components, or uint32.
using AnyLabelArray = nb::ndarray<nb::c_contig>;
using ConstLabelArray = nb::ndarray<const std::uint32_t, nb::c_contig>;
using Moments = std::vector<volccl::ComponentMoments>;

enum class Memory { host, cuda };

const std::uint8_t* mask_bytes(const MaskArray& mask) {
  const nb::dlpack::dtype dtype = mask.dtype();
  const auto code = static_cast<nb::dlpack::dtype_code>(dtype.code);
  const bool of_bytes =
      dtype.bits == 8 && dtype.lanes == 1 &&
      (code == nb::dlpack::dtype_code::UInt || code == nb::dlpack::dtype_code::Int ||
       code == nb::dlpack::dtype_code::Bool);
  if (!of_bytes) throw nb::value_error("volccl: a mask holds bool, uint8 or int8 values");
  return static_cast<const std::uint8_t*>(mask.data());
}

template <typename Array>
Memory memory_of(const Array& array, const std::string& what) {
  if (array.device_type() == nb::device::cpu::value) return Memory::host;
  if (array.device_type() == nb::device::cuda::value) return Memory::cuda;
  throw nb::value_error(
      ("volccl: " + what + " is neither in host memory nor on a CUDA device").c_str());
}

template <typename Array>
std::string shape_text(const Array& array) {
  std::string text = "(";
  for (std::size_t axis = 0; axis < array.ndim(); ++axis) {
    text += (axis ? ", " : "") + std::to_string(array.shape(axis));
  }
  return text + (array.ndim() == 1 ? ",)" : ")");
}

// The extent of the axes from `first_axis` on, the last one fastest: (z,) y, x.
template <typename Array>
volccl::Extent3 extent_of(const Array& array, std::size_t first_axis) {
  const std::size_t dimension = array.ndim() - first_axis;
  if (dimension != 2 && dimension != 3) {
    throw nb::value_error(
        ("volccl: a 2D image or a 3D volume was expected, not an array of shape " +
         shape_text(array))
            .c_str());
  }
  const std::size_t last = array.ndim() - 1;
  return volccl::Extent3{array.shape(last), array.shape(last - 1),
                         dimension == 3 ? array.shape(first_axis) : 1};
}

template <typename A, typename B>
bool same_shape(const A& a, const B& b) {
  bool same = a.ndim() == b.ndim();
  for (std::size_t axis = 0; same && axis < a.ndim(); ++axis) same = a.shape(axis) == b.shape(axis);
  return same;
}

template <typename Input, typename Output>
void require_same_place(const Input& input, const Output& output) {
  if (!same_shape(input, output)) {
    throw nb::value_error(("volccl: the labels' shape " + shape_text(output) +
                           " differs from the mask's " + shape_text(input))
                              .c_str());
  }
  if (input.device_type() != output.device_type() || input.device_id() != output.device_id()) {
    throw nb::value_error("volccl: the mask and the labels are on different devices");
  }
}

// Host arrays take "auto", "cpu" or "cuda" (the host API copies to the GPU and back); CUDA
// arrays are labeled on their own GPU.
volccl::Backend backend_for(Memory memory, const std::string& device) {
  const volccl::Backend backend = volccl::parse_backend(device);
  if (memory == Memory::cuda && backend == volccl::Backend::cpu) {
    throw nb::value_error(
        "volccl: a CUDA array is labeled on its GPU; pass device='auto' or 'cuda', or copy it "
        "to the host first");
  }
  return backend;
}

volccl::LabelOptions label_options(int connectivity, const std::string& algorithm,
                                   volccl::Backend backend, unsigned threads) {
  volccl::LabelOptions options;
  options.connectivity = connectivity;
  options.algorithm = volccl::parse_algorithm(algorithm);
  options.backend = backend;
  options.cpu_threads = threads;
  return options;
}

#if defined(VOLCCL_HAS_CUDA)
// A cudaStream_t passed from Python as an integer (0: the default stream).
void* stream_pointer(std::uintptr_t stream) { return reinterpret_cast<void*>(stream); }
#else
[[noreturn]] void throw_no_cuda() {
  throw std::runtime_error(
      "volccl: this build has no CUDA (it was built with VOLCCL_CUDA=OFF), so it cannot use "
      "arrays on a CUDA device");
}
#endif

// ComponentMoments as a NumPy structured dtype, its fields at the struct's own offsets.
nb::object make_moments_dtype() {
  using volccl::ComponentMoments;
  nb::dict fields;
  fields["names"] = nb::make_tuple("count", "sum", "sum_products", "min", "max");
  fields["formats"] = nb::make_tuple("u8", "(3,)u8", "(6,)u8", "(3,)u4", "(3,)u4");
  fields["offsets"] =
      nb::make_tuple(offsetof(ComponentMoments, count), offsetof(ComponentMoments, sum),
                     offsetof(ComponentMoments, sum_products), offsetof(ComponentMoments, min),
                     offsetof(ComponentMoments, max));
  fields["itemsize"] = sizeof(ComponentMoments);
  return nb::module_::import_("numpy").attr("dtype")(fields);
}

// Made once: NumPy parses the fields' format strings each time, which costs more than labeling a
// small image. Never released, as the module itself is not before the interpreter ends.
nb::object moments_dtype() {
  static const nb::object* const dtype = new nb::object(make_moments_dtype());
  return *dtype;
}

// The table as a NumPy array of moments_dtype that owns it, without a copy.
nb::object moments_array(Moments table) {
  auto* owned = new Moments(std::move(table));
  owned->reserve(1);  // a valid data pointer for NumPy also when there is no component
  nb::capsule owner(owned, [](void* table) noexcept { delete static_cast<Moments*>(table); });
  const std::size_t shape[2] = {owned->size(), sizeof(volccl::ComponentMoments)};
  nb::ndarray<nb::numpy, std::uint8_t> bytes(owned->data(), 2, shape, owner);
  return bytes.cast().attr("view")(moments_dtype()).attr("reshape")(owned->size());
}

nb::dict label_result(const volccl::LabelResult& result) {
  nb::dict out;
  out["count"] = result.component_count;
  out["algorithm"] = volccl::to_string(result.algorithm_used);
  out["backend"] = volccl::to_string(result.backend_used);
  return out;
}

// Labels `input` (in `array`'s memory) into `labels`.
template <typename Array>
nb::dict label_input_into(const Array& array, const volccl::LabelInput& input,
                          const AnyLabelArray& labels, int connectivity,
                          const std::string& algorithm, const std::string& device, unsigned threads,
                          std::uintptr_t stream, bool measure) {
  require_same_place(array, labels);
  const Memory memory = memory_of(array, input.label_map ? "the label map" : "the mask");
  const volccl::Extent3 extent = extent_of(array, 0);
  const volccl::LabelOptions options =
      label_options(connectivity, algorithm, backend_for(memory, device), threads);
  const bool wide = labels.dtype() == nb::dtype<std::uint64_t>();
  if (!wide && labels.dtype() != nb::dtype<std::uint32_t>()) {
    throw nb::type_error("volccl: the labels must be a uint32 or uint64 array");
  }
  if (wide && memory != Memory::host) {
    throw nb::value_error("volccl: 64-bit labels are written in host memory only");
  }
  volccl::LabelResult result;
  Moments moments;
  // The C++ call's wall time as a C++ caller sees it, for the benchmark of the binding's overhead.
  const auto call_start = std::chrono::steady_clock::now();
  if (memory == Memory::host) {
    nb::gil_scoped_release unlocked;
    const auto label_as = [&](auto* out) {
      return measure ? volccl::label(input, extent, out, moments, options)
                     : volccl::label(input, extent, out, options);
    };
    result = wide ? label_as(static_cast<std::uint64_t*>(labels.data()))
                  : label_as(static_cast<std::uint32_t*>(labels.data()));
  } else {
#if defined(VOLCCL_HAS_CUDA)
    nb::gil_scoped_release unlocked;
    if (measure) {
      volccl::cuda::DeviceMoments table;
      result = volccl::cuda::label(input, extent, static_cast<std::uint32_t*>(labels.data()), table,
                                   options, stream_pointer(stream));
      moments = table.to_host();
    } else {
      result = volccl::cuda::label(input, extent, static_cast<std::uint32_t*>(labels.data()),
                                   options, stream_pointer(stream));
    }
#else
    (void)stream;
    throw_no_cuda();
#endif
  }
  const std::chrono::duration<double, std::milli> call_time =
      std::chrono::steady_clock::now() - call_start;
  nb::dict out = label_result(result);
  out["call_ms"] = call_time.count();
  if (measure) out["moments"] = moments_array(std::move(moments));
  return out;
}

nb::dict label_into(const MaskArray& mask, const AnyLabelArray& labels, int connectivity,
                    const std::string& algorithm, const std::string& device, unsigned threads,
                    std::uintptr_t stream, bool measure) {
  return label_input_into(mask, volccl::LabelInput::binary(mask_bytes(mask)), labels, connectivity,
                          algorithm, device, threads, stream, measure);
}

// The value type of an integer array's dtype.
volccl::ValueType value_type_of(nb::dlpack::dtype dtype) {
  const bool is_signed = dtype.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
  const bool is_unsigned = dtype.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt);
  if ((is_signed || is_unsigned) && dtype.lanes == 1) {
    switch (dtype.bits) {
      case 8:
        return is_signed ? volccl::ValueType::int8 : volccl::ValueType::uint8;
      case 16:
        return is_signed ? volccl::ValueType::int16 : volccl::ValueType::uint16;
      case 32:
        return is_signed ? volccl::ValueType::int32 : volccl::ValueType::uint32;
      case 64:
        return is_signed ? volccl::ValueType::int64 : volccl::ValueType::uint64;
      default:
        break;
    }
  }
  throw nb::value_error("volccl: a label map holds 8-, 16-, 32- or 64-bit integers");
}

// `background`: the background value's bits as an unsigned 64-bit integer (Python reduces it
// modulo 2^64).
nb::dict label_map_into(const nb::ndarray<nb::c_contig>& values, const AnyLabelArray& labels,
                        std::uint64_t background, int connectivity, const std::string& algorithm,
                        const std::string& device, unsigned threads, std::uintptr_t stream,
                        bool measure) {
  const volccl::LabelInput input{values.data(), value_type_of(values.dtype()), true, background};
  return label_input_into(values, input, labels, connectivity, algorithm, device, threads, stream,
                          measure);
}

nb::object measure_into(const ConstLabelArray& labels, std::uint32_t count,
                        const std::string& device, unsigned threads, std::uintptr_t stream) {
  const Memory memory = memory_of(labels, "the labels");
  const volccl::Extent3 extent = extent_of(labels, 0);
  const volccl::Backend backend = backend_for(memory, device);
  if (memory == Memory::host && backend == volccl::Backend::cuda) {
    throw nb::value_error(
        "volccl: labels in host memory are measured on the CPU; pass a CUDA array to measure "
        "on the GPU");
  }
  Moments moments;
  if (memory == Memory::host) {
    nb::gil_scoped_release unlocked;
    moments = volccl::measure(labels.data(), extent, count, threads);
  } else {
#if defined(VOLCCL_HAS_CUDA)
    nb::gil_scoped_release unlocked;
    moments = volccl::cuda::measure(labels.data(), extent, count, stream_pointer(stream)).to_host();
#else
    (void)stream;
    throw_no_cuda();
#endif
  }
  return moments_array(std::move(moments));
}

// Item by item along the first axis, in one call: the caller's loop would pay Python's and the
// binding's overhead per item, which dominates on small images.
nb::ndarray<nb::numpy, std::uint32_t, nb::ndim<1>> label_batch_into(
    const MaskArray& masks, const LabelArray& labels, int connectivity,
    const std::string& algorithm, const std::string& device, unsigned threads,
    std::uintptr_t stream) {
  require_same_place(masks, labels);
  const Memory memory = memory_of(masks, "the masks");
  if (masks.ndim() != 3 && masks.ndim() != 4) {
    throw nb::value_error(("volccl: a batch of 2D images (N, Y, X) or of volumes (N, Z, Y, X) "
                           "was expected, not an array of shape " +
                           shape_text(masks))
                              .c_str());
  }
  const std::size_t items = masks.shape(0);
  const volccl::Extent3 extent = extent_of(masks, 1);
  const std::uint64_t voxels = extent.voxel_count();
  const volccl::LabelOptions options =
      label_options(connectivity, algorithm, backend_for(memory, device), threads);
#if !defined(VOLCCL_HAS_CUDA)
  (void)stream;
  if (memory == Memory::cuda) throw_no_cuda();
#endif
  const std::uint8_t* first_mask = mask_bytes(masks);
  auto* counts = new std::vector<std::uint32_t>(items);
  nb::capsule owner(counts, [](void* counts) noexcept {
    delete static_cast<std::vector<std::uint32_t>*>(counts);
  });
  {
    nb::gil_scoped_release unlocked;
    for (std::size_t item = 0; item < items; ++item) {
      const std::uint8_t* mask = first_mask + item * voxels;
      std::uint32_t* item_labels = labels.data() + item * voxels;
#if defined(VOLCCL_HAS_CUDA)
      if (memory == Memory::cuda) {
        (*counts)[item] =
            volccl::cuda::label(mask, extent, item_labels, options, stream_pointer(stream))
                .component_count;
        continue;
      }
#endif
      (*counts)[item] = volccl::label(mask, extent, item_labels, options).component_count;
    }
  }
  return nb::ndarray<nb::numpy, std::uint32_t, nb::ndim<1>>(counts->data(), {items}, owner);
}

// The flat index of each label's first voxel, for labels numbered 1..count in raster order of
// their first voxels, as volccl numbers them: a label not seen before is then always the next
// one, so one pass finds them all, skipping at once the blocks that hold only labels seen.
// Labels on a CUDA device are scanned there, on `stream`, and only the indices come back.
void first_voxels_into(
    const ConstLabelArray& labels,
    const nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>& first,
    std::uintptr_t stream) {
  const std::size_t count = first.shape(0);
  if (memory_of(labels, "the labels") == Memory::cuda) {
    if (count > std::numeric_limits<std::uint32_t>::max()) {
      throw nb::value_error("volccl: labels on a CUDA device number at most 2^32 - 1");
    }
#if defined(VOLCCL_HAS_CUDA)
    const volccl::Extent3 extent = extent_of(labels, 0);
    nb::gil_scoped_release unlocked;
    volccl::cuda::first_voxels(labels.data(), extent, static_cast<std::uint32_t>(count),
                               first.data(), stream_pointer(stream));
    return;
#else
    (void)stream;
    throw_no_cuda();
#endif
  }
  const std::uint32_t* data = labels.data();
  const std::size_t size = labels.size();
  std::size_t seen = 0;
  bool in_order = true;
  {
    nb::gil_scoped_release unlocked;
    constexpr std::size_t block = 512;
    for (std::size_t start = 0; start < size && seen < count && in_order; start += block) {
      const std::size_t end = std::min(size, start + block);
      std::uint32_t top = 0;
      for (std::size_t i = start; i < end; ++i) top = std::max(top, data[i]);
      if (top <= seen) continue;
      for (std::size_t i = start; i < end && in_order; ++i) {
        if (data[i] <= seen) continue;
        in_order = seen < count && data[i] == seen + 1;
        if (in_order) first.data()[seen++] = static_cast<std::int64_t>(i);
      }
    }
  }
  if (!in_order || seen != count) {
    throw nb::value_error(("volccl: the labels are not numbered 1.." + std::to_string(count) +
                           " in raster order of their first voxels")
                              .c_str());
  }
}

// out = table[local] for a block of a chunk's local labels (any strides, as a view of the
// chunk gives them) into a C-contiguous array of the final labels, uint32 or uint64 as the
// table; returns whether any voxel is foreground. NumPy's table[local] would first widen the
// indices into a temporary of intp.
template <class Final>
bool relabel_into(const nb::ndarray<const std::uint32_t, nb::device::cpu>& local,
                  const nb::ndarray<const Final, nb::ndim<1>, nb::c_contig, nb::device::cpu>& table,
                  const nb::ndarray<Final, nb::c_contig, nb::device::cpu>& out) {
  if (!same_shape(local, out) || local.ndim() < 1 || local.ndim() > 3) {
    throw nb::value_error(("volccl: relabeling a block of shape " + shape_text(local) +
                           " into one of shape " + shape_text(out))
                              .c_str());
  }
  // (z, y, x) shape and element strides, the missing leading axes of length 1.
  std::array<std::size_t, 3> shape{1, 1, 1};
  std::array<std::int64_t, 3> stride{0, 0, 0};
  const std::size_t skipped = 3 - local.ndim();
  for (std::size_t axis = 0; axis < local.ndim(); ++axis) {
    shape[skipped + axis] = local.shape(axis);
    stride[skipped + axis] = local.stride(axis);
  }
  const std::size_t table_size = table.shape(0);
  std::uint32_t largest = 0;
  std::uint32_t foreground_bits = 0;
  {
    nb::gil_scoped_release unlocked;
    const Final* final_labels = table.data();
    Final* target = out.data();
    for (std::size_t z = 0; z < shape[0]; ++z) {
      for (std::size_t y = 0; y < shape[1]; ++y) {
        const std::uint32_t* row = local.data() + static_cast<std::int64_t>(z) * stride[0] +
                                   static_cast<std::int64_t>(y) * stride[1];
        const auto relabel_row = [&](auto x_stride) {
          for (std::size_t x = 0; x < shape[2]; ++x) {
            const std::uint32_t label = row[static_cast<std::int64_t>(x) * x_stride];
            largest = std::max(largest, label);
            foreground_bits |= label;
            *target++ = label < table_size ? final_labels[label] : 0;
          }
        };
        // Rows are contiguous in a view of a chunk: a constant stride lets the compiler see it.
        if (stride[2] == 1) {
          relabel_row(std::integral_constant<std::int64_t, 1>{});
        } else {
          relabel_row(stride[2]);
        }
      }
    }
  }
  if (local.size() > 0 && largest >= table_size) {
    throw nb::value_error(("volccl: local label " + std::to_string(largest) +
                           " is beyond a table of " + std::to_string(table_size) + " labels")
                              .c_str());
  }
  return foreground_bits != 0;
}

// describe() of every row of a moments table (moments_dtype, viewed as bytes), in the library's
// axis order x, y, z. Rows of no voxel give NaN.
nb::dict describe_moments(
    const nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>& table_bytes,
    const std::array<double, 3>& spacing, const std::array<double, 3>& origin, int dimension) {
  constexpr std::size_t row_bytes = sizeof(volccl::ComponentMoments);
  if (table_bytes.shape(0) % row_bytes != 0) {
    throw nb::value_error("volccl: a moments table's size must be a whole number of rows");
  }
  if (dimension != 2 && dimension != 3) throw nb::value_error("volccl: dimension must be 2 or 3");
  const std::size_t rows = table_bytes.shape(0) / row_bytes;
  volccl::ImageGeometry geometry;
  geometry.spacing = spacing;
  geometry.origin = origin;

  struct Columns {
    std::vector<double> physical_size, centroid, covariance, principal_moments, principal_axes;
  };
  auto* columns = new Columns{std::vector<double>(rows), std::vector<double>(rows * 3),
                              std::vector<double>(rows * 6), std::vector<double>(rows * 3),
                              std::vector<double>(rows * 9)};
  nb::capsule owner(columns, [](void* columns) noexcept { delete static_cast<Columns*>(columns); });
  {
    nb::gil_scoped_release unlocked;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t row = 0; row < rows; ++row) {
      volccl::ComponentMoments moments;
      std::memcpy(static_cast<void*>(&moments), table_bytes.data() + row * row_bytes, row_bytes);
      const auto put = [](std::vector<double>& column, std::size_t row, const auto& values) {
        std::copy(values.begin(), values.end(), column.begin() + row * values.size());
      };
      if (moments.count == 0) {
        std::fill_n(columns->centroid.begin() + row * 3, 3, nan);
        std::fill_n(columns->covariance.begin() + row * 6, 6, nan);
        std::fill_n(columns->principal_moments.begin() + row * 3, 3, nan);
        std::fill_n(columns->principal_axes.begin() + row * 9, 9, nan);
        continue;
      }
      const volccl::ComponentShape shape = volccl::describe(moments, geometry, dimension);
      columns->physical_size[row] = shape.physical_size;
      put(columns->centroid, row, shape.centroid);
      put(columns->covariance, row, shape.covariance);
      put(columns->principal_moments, row, shape.principal_moments);
      put(columns->principal_axes, row, shape.principal_axes);
    }
  }
  const auto column = [&](std::vector<double>& values, std::size_t width) {
    return nb::ndarray<nb::numpy, double>(values.data(), {rows, width}, owner);
  };
  nb::dict out;
  out["physical_size"] =
      nb::ndarray<nb::numpy, double, nb::ndim<1>>(columns->physical_size.data(), {rows}, owner);
  out["centroid"] = column(columns->centroid, 3);
  out["covariance"] = column(columns->covariance, 6);
  out["principal_moments"] = column(columns->principal_moments, 3);
  out["principal_axes"] = column(columns->principal_axes, 9);
  return out;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (volccl::Algorithm algorithm : volccl::all_algorithms()) {
    names.push_back(volccl::to_string(algorithm));
  }
  return names;
}

}  // namespace

NB_MODULE(_volccl, m) {
  m.doc() = "volccl's compiled core; use the functions of the volccl package instead";

  nb::register_exception_translator([](const std::exception_ptr& error, void*) {
    try {
      std::rethrow_exception(error);
    } catch (const volccl::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const volccl::OutOfDeviceMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const volccl::Error& e) {  // CudaError, NoCudaDevice
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.attr("has_cuda") =
#if defined(VOLCCL_HAS_CUDA)
      true;
#else
      false;
#endif
  m.def("cuda_available", &volccl::cuda_available,
        "Whether this build has CUDA and the machine a usable device.");
  m.def("cuda_device_description", &volccl::cuda_device_description,
        "The device's name and compute capability, or why none is usable.");
  m.def("algorithms", &algorithm_names, "The concrete algorithms' names.");
  m.def(
      "algorithm_summary",
      [](const std::string& name) { return volccl::summary(volccl::parse_algorithm(name)); },
      "name"_a);
  m.def(
      "algorithm_connectivities",
      [](const std::string& name) { return volccl::connectivities(volccl::parse_algorithm(name)); },
      "name"_a);
  m.def("moments_dtype", &moments_dtype,
        "The NumPy dtype of a moments table: one ComponentMoments per row, label i + 1 in row i.");
  m.def("label_into", &label_into, "mask"_a.noconvert(), "labels"_a.noconvert(), "connectivity"_a,
        "algorithm"_a, "device"_a, "threads"_a, "stream"_a, "measure"_a = false,
        "Labels a C-contiguous mask of bytes (bool, uint8 or int8) into a uint32 array of its "
        "shape on the mask's device; "
        "returns count, algorithm and backend, and the moments table when `measure`.");
  m.def("label_map_into", &label_map_into, "values"_a.noconvert(), "labels"_a.noconvert(),
        "background"_a, "connectivity"_a, "algorithm"_a, "device"_a, "threads"_a, "stream"_a,
        "measure"_a = false,
        "Labels a C-contiguous integer label map (every connected region of equal value other "
        "than `background`, given as its bits modulo 2^64) into a uint32 array of its shape.");
  m.def("measure_into", &measure_into, "labels"_a.noconvert(), "count"_a, "device"_a, "threads"_a,
        "stream"_a, "The moments table of a label image (0 background, 1..count), on its device.");
  m.def("label_batch_into", &label_batch_into, "masks"_a.noconvert(), "labels"_a.noconvert(),
        "connectivity"_a, "algorithm"_a, "device"_a, "threads"_a, "stream"_a,
        "Labels every item along the first axis; returns the component counts.");
  m.def("first_voxels_into", &first_voxels_into, "labels"_a.noconvert(), "first"_a.noconvert(),
        "stream"_a = 0,
        "The flat index of each label's first voxel, for labels 1..len(first) numbered in raster "
        "order of their first voxels (labels on a CUDA device: found there, on `stream`).");
  m.def("relabel_into", &relabel_into<std::uint64_t>, "local"_a.noconvert(), "table"_a.noconvert(),
        "out"_a.noconvert(),
        "out = table[local] for uint32 labels of any strides into uint64 or uint32 final "
        "labels (out and table of one type); returns whether any is non-zero.");
  m.def("relabel_into", &relabel_into<std::uint32_t>, "local"_a.noconvert(), "table"_a.noconvert(),
        "out"_a.noconvert());
  m.def("describe", &describe_moments, "table_bytes"_a.noconvert(), "spacing"_a, "origin"_a,
        "dimension"_a, "Derived statistics of every row of a moments table, in x, y, z order.");
}
