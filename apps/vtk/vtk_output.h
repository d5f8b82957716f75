// A label image and its components' statistics as VTK XML files that ParaView opens in one step:
//
//   volccl::vtk_output::LabelVolume volume{labels.data(), extent, 3, geometry};
//   volccl::vtk_output::write("out", volume, shapes, {volccl::vtk_output::LabelData::point, true});
//   // paraview out/volccl.pvd
//
// writes into the directory:
// - labels.vti: the labels (uint32 or uint64 array "labels", the active scalars) with the
//   image's spacing, origin and direction, appended raw and zlib-compressed.
// - components.vtp: one vertex per component at its physical centroid, with point arrays
//   "label" (the active scalars), "value" (label maps: LabelVolume::values), "count",
//   "physical_size", "centroid_index",
//   "bounding_box_min", "bounding_box_max" (index space, inclusive), "principal_moments",
//   "principal_axes" (row r is axis r), "ellipsoid_radii" and the tensor "ellipsoid" (the active
//   tensors): the solid ellipsoid with the component's second moments, whose semi-axes are
//   sqrt(5 lambda) in 3D and 2 sqrt(lambda) in 2D (lambda: the principal moments). The tensor is
//   sum_i radius_i * axis_i axis_i^T, so vtkTensorGlyph (ParaView's Tensor Glyph), which scales
//   its source by the eigenvalues, draws the ellipsoid from a sphere of radius 1: set the
//   sphere's radius to 1 (vtkSphereSource's and ParaView's default is 0.5). In 2D the third
//   radius is 0, and the glyph is a flat ellipse in the image's plane (vtkTensorGlyph replaces a
//   zero scale by 1e-6 of the largest).
// - surfaces.vtp (Options::surfaces): per component of `shapes`, the triangles (contour lines in
//   2D) of vtkDiscreteFlyingEdges3D (2D), halfway between the voxel centres inside and outside
//   it, with point normals (3D) and the cell arrays "label" and (label maps) "value". Each surface
//   is computed within the component's bounding box padded by one background voxel, so surfaces are
//   closed at the volume's border and the work is the sum of the boxes' volumes, not one pass over
//   the whole volume per component.
// - volccl.pvd: a collection of the files above, by relative names.
//
// Everything is in physical space: physical = origin + direction * (index .* spacing). A 2D
// image lies in the plane z = 0 (the z terms of its geometry are ignored), as ComponentShape's
// z terms are 0. No VTK headers here: only vtk_output.cpp compiles them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "volccl/statistics.h"
#include "volccl/types.h"

namespace volccl::vtk_output {

// The values of a label map's components, as 64-bit integers: int64 for signed input types,
// uint64 (the same bits) for unsigned ones.
struct ComponentValues {
  std::vector<std::int64_t> values;
  bool is_unsigned = false;
};

// The labels are 32-bit (`labels`) or 64-bit (`wide_labels`): give one of them. The scene
// numbers at most 2^32 - 1 components either way (its arrays of labels are 32-bit).
struct LabelVolume {
  const std::uint32_t* labels = nullptr;  // x fastest, then y, then z; 0 background, 1..N
  Extent3 extent;                         // z == 1 for a 2D image
  unsigned dimension = 3;                 // 2 or 3
  ImageGeometry geometry;
  // A label map's components: the value of each (element i for label i + 1), written as the
  // array "value" of components.vtp (point data) and surfaces.vtp (cell data), so surfaces can be
  // coloured by structure. Null for a mask.
  const ComponentValues* values = nullptr;
  const std::uint64_t* wide_labels = nullptr;  // instead of `labels`
};

// Where the labels live in labels.vti: on points, one per voxel centre (ITK's and ParaView's
// view of an image), or on cells, one per voxel, the points then being the voxels' corners.
enum class LabelData { point, cell };

struct Options {
  LabelData label_data = LabelData::point;
  bool surfaces = false;  // also write surfaces.vtp
};

// The files write() puts into its directory.
inline constexpr const char* kImageFile = "labels.vti";
inline constexpr const char* kComponentsFile = "components.vtp";
inline constexpr const char* kSurfacesFile = "surfaces.vtp";
inline constexpr const char* kCollectionFile = "volccl.pvd";

struct WrittenFiles {
  std::filesystem::path image;       // labels.vti
  std::filesystem::path components;  // components.vtp
  std::filesystem::path surfaces;    // surfaces.vtp; empty unless Options::surfaces
  std::filesystem::path collection;  // volccl.pvd
};

// Writes the files above into `directory`, which must exist, replacing files of the same names.
// `shapes[i]` describes label i + 1; rows whose count is 0 are skipped. Throws
// std::invalid_argument for a volume that is not 2D or 3D, or a bounding box outside it, and
// std::runtime_error naming the file when a file cannot be written.
WrittenFiles write(const std::filesystem::path& directory, const LabelVolume& volume,
                   const std::vector<ComponentShape>& shapes, const Options& options = {});

}  // namespace volccl::vtk_output
