// Labels a small volume with the CPU backend of an installed volccl and checks the answer.
// Exits 0 when the labels are right.
#include <cstdint>
#include <iostream>
#include <vector>

#include <volccl/cuda.h>
#include <volccl/volccl.h>

int main() {
  // 5x4x3 voxels, x fastest. Three components under 26-connectivity:
  //   A: (0,0,0) and (1,1,1), which touch only at a corner;
  //   B: the row y = 3 of slice z = 0 from x = 2 to x = 4;
  //   C: the single voxel (4,0,2).
  const volccl::Extent3 extent{5, 4, 3};
  std::vector<std::uint8_t> mask(extent.voxel_count(), 0);
  auto at = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) -> std::uint8_t& {
    return mask[(z * extent.y + y) * extent.x + x];
  };
  at(0, 0, 0) = 1;
  at(1, 1, 1) = 255;
  at(2, 3, 0) = at(3, 3, 0) = at(4, 3, 0) = 1;
  at(4, 0, 2) = 7;

  std::vector<std::uint32_t> labels(extent.voxel_count(), 0xDEADBEEFu);
  volccl::LabelOptions options;
  options.backend = volccl::Backend::cpu;
  options.algorithm = volccl::parse_algorithm("bke");
  const volccl::LabelResult result = volccl::label(mask.data(), extent, labels.data(), options);

  // Raster order of first voxels: A at index 0, B at (2,3,0), C at (4,0,2).
  std::vector<std::uint32_t> expected(extent.voxel_count(), 0);
  auto index = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    return (z * extent.y + y) * extent.x + x;
  };
  expected[index(0, 0, 0)] = expected[index(1, 1, 1)] = 1;
  expected[index(2, 3, 0)] = expected[index(3, 3, 0)] = expected[index(4, 3, 0)] = 2;
  expected[index(4, 0, 2)] = 3;

  bool ok = result.component_count == 3 && result.backend_used == volccl::Backend::cpu &&
            labels == expected;

  // Statistics: B is 3 voxels from x = 2 to 4 at y = 3; its centroid is (3, 3, 0).
  std::vector<volccl::ComponentMoments> moments;
  volccl::label(mask.data(), extent, labels.data(), moments, options);
  const volccl::ComponentShape b = volccl::describe(moments.at(1), volccl::ImageGeometry{}, 3);
  ok = ok && moments.size() == 3 && b.count == 3 && b.centroid[0] == 3.0 && b.centroid[1] == 3.0 &&
       b.bounding_box_min[0] == 2 && b.bounding_box_max[0] == 4;

  // Bad input must throw the documented exception type.
  try {
    volccl::validate(volccl::Extent3{0, 1, 1}, options);
    std::cerr << "validate accepted an empty extent\n";
    ok = false;
  } catch (const volccl::InvalidArgument&) {
  }

#if defined(VOLCCL_HAS_CUDA)
  // The device entry point must be in the installed library too (linked, not called: this
  // test runs on machines without a GPU).
  using DeviceLabel = volccl::LabelResult (*)(const std::uint8_t*, volccl::Extent3, std::uint32_t*,
                                              const volccl::LabelOptions&, void*);
  using DeviceMeasure =
      volccl::cuda::DeviceMoments (*)(const std::uint32_t*, volccl::Extent3, std::uint32_t, void*);
  const DeviceLabel device_label = &volccl::cuda::label;
  const DeviceMeasure device_measure = &volccl::cuda::measure;
  if (device_label == nullptr || device_measure == nullptr) ok = false;
#endif

  std::cout << "volccl consumer: " << result.component_count << " components, backend "
            << volccl::to_string(result.backend_used)
            << ", CUDA: " << volccl::cuda_device_description() << "\n";
  if (!ok) {
    std::cerr << "volccl consumer: wrong labels (expected 3 components)\n";
    return 1;
  }
  std::cout << "volccl consumer: OK\n";
  return 0;
}
