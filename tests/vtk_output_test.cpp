// volccl::vtk_output: the files read back with VTK's readers and checked value by value against
// the labels and the ComponentShape rows they were written from.
#include "vtk_output.h"

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFeatureEdges.h>
#include <vtkImageData.h>
#include <vtkMath.h>
#include <vtkMatrix3x3.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPolyDataReader.h>

namespace {

namespace fs = std::filesystem;
using volccl::ComponentShape;
using volccl::Extent3;
using volccl::ImageGeometry;
using volccl::vtk_output::LabelData;
using volccl::vtk_output::LabelVolume;
using volccl::vtk_output::WrittenFiles;

// Each test writes into a fresh directory of its own, removed afterwards.
class VtkOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "volccl_vtk_output_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path directory_;
};

// A rotation with short decimal entries (from the quaternion (1, 2, 2, 4) / 5), a non-uniform
// spacing and an origin off zero, so that no axis is mistaken for another.
ImageGeometry Oblique() {
  ImageGeometry geometry;
  geometry.spacing = {0.5, 0.75, 1.25};
  geometry.origin = {10.5, -20.25, 30};
  geometry.direction = {-0.6, 0, 0.8, 0.64, -0.6, 0.48, 0.48, 0.8, 0.36};
  return geometry;
}

// A 2D geometry whose z terms must be ignored.
ImageGeometry Oblique2d() {
  ImageGeometry geometry;
  geometry.spacing = {0.5, 0.75, 9};
  geometry.origin = {10.5, -20.25, 7};
  geometry.direction = {0.6, -0.8, 0.3, 0.8, 0.6, 0.2, 0.1, 0.2, 5};
  return geometry;
}

// The geometry as labels.vti must hold it: a 2D image in the plane z = 0.
ImageGeometry In3d(const ImageGeometry& geometry, unsigned dimension) {
  if (dimension == 3) return geometry;
  ImageGeometry flat;
  flat.spacing = {geometry.spacing[0], geometry.spacing[1], 1};
  flat.origin = {geometry.origin[0], geometry.origin[1], 0};
  flat.direction = {geometry.direction[0],
                    geometry.direction[1],
                    0,
                    geometry.direction[3],
                    geometry.direction[4],
                    0,
                    0,
                    0,
                    1};
  return flat;
}

std::array<double, 3> ToPhysical(const ImageGeometry& g, const std::array<double, 3>& index) {
  std::array<double, 3> physical = g.origin;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) physical[i] += g.direction[3 * i + j] * g.spacing[j] * index[j];
  }
  return physical;
}

// The inverse of ToPhysical for an orthonormal direction.
std::array<double, 3> ToIndex(const ImageGeometry& g, const double physical[3]) {
  std::array<double, 3> index = {0, 0, 0};
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      index[j] += g.direction[3 * i + j] * (physical[i] - g.origin[i]);
    }
    index[j] /= g.spacing[j];
  }
  return index;
}

vtkSmartPointer<vtkImageData> ReadImage(const fs::path& path) {
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  if (reader->GetErrorCode() != 0 || reader->GetOutput()->GetNumberOfPoints() == 0) {
    throw std::runtime_error("cannot read " + path.string());
  }
  return reader->GetOutput();
}

vtkSmartPointer<vtkPolyData> ReadPolyData(const fs::path& path) {
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  if (reader->GetErrorCode() != 0) throw std::runtime_error("cannot read " + path.string());
  return reader->GetOutput();
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- labels.vti --------------------------------------------------------------------------------

struct ImageCase {
  const char* name;
  Extent3 extent;
  unsigned dimension;
  LabelData label_data;
};

class ImageTest : public VtkOutputTest, public ::testing::WithParamInterface<ImageCase> {};

TEST_P(ImageTest, HoldsEveryLabelWithTheGeometry) {
  const ImageCase& c = GetParam();
  std::vector<std::uint32_t> labels(c.extent.voxel_count());
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::uint32_t>(i % 11);
  const ImageGeometry geometry = c.dimension == 3 ? Oblique() : Oblique2d();
  const LabelVolume volume{labels.data(), c.extent, c.dimension, geometry};
  const WrittenFiles files = volccl::vtk_output::write(directory_, volume, {}, {c.label_data});
  EXPECT_EQ(files.image, directory_ / "labels.vti");

  const vtkSmartPointer<vtkImageData> image = ReadImage(files.image);
  const ImageGeometry expected = In3d(geometry, c.dimension);
  const bool cells = c.label_data == LabelData::cell;
  std::array<int, 3> dimensions = {static_cast<int>(c.extent.x), static_cast<int>(c.extent.y),
                                   static_cast<int>(c.extent.z)};
  std::array<double, 3> origin = expected.origin;
  if (cells) {
    for (unsigned axis = 0; axis < c.dimension; ++axis) ++dimensions[axis];
    origin = ToPhysical(expected, {-0.5, -0.5, c.dimension == 3 ? -0.5 : 0.0});
  }
  int read_dimensions[3];
  image->GetDimensions(read_dimensions);
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(read_dimensions[axis], dimensions[axis]) << "axis " << axis;
    EXPECT_EQ(image->GetSpacing()[axis], expected.spacing[axis]) << "axis " << axis;
    EXPECT_EQ(image->GetOrigin()[axis], origin[axis]) << "axis " << axis;
  }
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(image->GetDirectionMatrix()->GetData()[i], expected.direction[i]) << "entry " << i;
  }

  vtkDataSetAttributes* holder =
      cells ? static_cast<vtkDataSetAttributes*>(image->GetCellData()) : image->GetPointData();
  vtkDataSetAttributes* other =
      cells ? static_cast<vtkDataSetAttributes*>(image->GetPointData()) : image->GetCellData();
  EXPECT_EQ(other->GetNumberOfArrays(), 0);
  vtkDataArray* read_labels = holder->GetScalars();
  ASSERT_NE(read_labels, nullptr);
  EXPECT_STREQ(read_labels->GetName(), "labels");
  EXPECT_EQ(read_labels->GetDataType(), VTK_UNSIGNED_INT);
  ASSERT_EQ(read_labels->GetNumberOfTuples(), static_cast<vtkIdType>(labels.size()));
  ASSERT_EQ(read_labels->GetNumberOfComponents(), 1);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    ASSERT_EQ(read_labels->GetComponent(static_cast<vtkIdType>(i), 0), labels[i]) << "voxel " << i;
  }
  // VTK's own index order: voxel (x, y, z) is the point or cell VTK numbers so.
  const int last[3] = {static_cast<int>(c.extent.x) - 1, static_cast<int>(c.extent.y) - 1,
                       static_cast<int>(c.extent.z) - 1};
  int ijk[3] = {last[0], last[1], last[2]};
  const vtkIdType id = cells ? image->ComputeCellId(ijk) : image->ComputePointId(ijk);
  EXPECT_EQ(read_labels->GetComponent(id, 0), labels.back());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ImageTest,
    ::testing::Values(ImageCase{"volume_points", {7, 5, 3}, 3, LabelData::point},
                      ImageCase{"volume_cells", {7, 5, 3}, 3, LabelData::cell},
                      ImageCase{"image_points", {7, 5, 1}, 2, LabelData::point},
                      ImageCase{"image_cells", {7, 5, 1}, 2, LabelData::cell},
                      ImageCase{"one_slice_volume_points", {7, 5, 1}, 3, LabelData::point},
                      ImageCase{"one_slice_volume_cells", {7, 5, 1}, 3, LabelData::cell},
                      ImageCase{"one_voxel_cells", {1, 1, 1}, 3, LabelData::cell}),
    [](const ::testing::TestParamInfo<ImageCase>& info) { return info.param.name; });

// ---- components.vtp ----------------------------------------------------------------------------

// Orthonormal rows, determinant +1: a rotation by `angle` about the unit vector `u`.
std::array<double, 9> Rotation(std::array<double, 3> u, double angle) {
  const double norm = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (double& c : u) c /= norm;
  const double cosine = std::cos(angle);
  const double sine = std::sin(angle);
  std::array<double, 9> r;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r[3 * i + j] = (i == j ? cosine : 0) + (1 - cosine) * u[i] * u[j];
  }
  r[1] -= sine * u[2];
  r[2] += sine * u[1];
  r[3] += sine * u[2];
  r[5] -= sine * u[0];
  r[6] -= sine * u[1];
  r[7] += sine * u[0];
  return r;
}

// Rows for labels 1..4 of a 3D volume; label 2 is empty and must be skipped.
std::vector<ComponentShape> Shapes3d() {
  std::vector<ComponentShape> shapes(4);
  ComponentShape& elongated = shapes[0];
  elongated.count = 120;
  elongated.physical_size = 56.25;
  elongated.centroid_index = {3.25, 2.5, 1.125};
  elongated.centroid = {11.875, -19.5, 32.625};
  elongated.principal_moments = {0.5, 2.0, 4.5};
  elongated.principal_axes = Rotation({1, 2, 3}, 0.7);
  elongated.bounding_box_min = {1, 0, 0};
  elongated.bounding_box_max = {6, 4, 2};
  ComponentShape& single_voxel = shapes[2];
  single_voxel.count = 1;
  single_voxel.physical_size = 0.46875;
  single_voxel.centroid_index = {6, 4, 2};
  single_voxel.centroid = {9.1, -18.86, 32.92};
  single_voxel.principal_axes = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  single_voxel.bounding_box_min = {6, 4, 2};
  single_voxel.bounding_box_max = {6, 4, 2};
  ComponentShape& flat = shapes[3];
  flat.count = 5000000000ull;  // beyond 32 bits
  flat.physical_size = 1.875e9;
  flat.centroid_index = {2.5, 1.75, 0.5};
  flat.centroid = {-3.5, 7.25, 1e6};
  flat.principal_moments = {1e-3, 7, 7.5};
  flat.principal_axes = Rotation({-2, 0.5, 1}, 2.1);
  flat.bounding_box_min = {0, 0, 0};
  flat.bounding_box_max = {6, 4, 1};
  return shapes;
}

vtkDataArray* PointArray(vtkPolyData* data, const char* name, int components, int type) {
  vtkDataArray* array = data->GetPointData()->GetArray(name);
  if (array == nullptr) throw std::runtime_error(std::string("no point array ") + name);
  EXPECT_EQ(array->GetNumberOfComponents(), components) << name;
  EXPECT_EQ(array->GetDataType(), type) << name;
  EXPECT_EQ(array->GetNumberOfTuples(), data->GetNumberOfPoints()) << name;
  return array;
}

// The radii and axes vtkTensorGlyph gets from the tensor: vtkMath::Jacobi, as it calls it.
void ExpectTensorGivesEllipsoid(const double tensor[9], const std::array<double, 3>& radii,
                                const std::array<double, 9>& axes, unsigned dimension) {
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) EXPECT_EQ(tensor[3 * a + b], tensor[3 * b + a]);
  }
  double rows[3][3];
  double* matrix[3] = {rows[0], rows[1], rows[2]};
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) rows[a][b] = tensor[3 * a + b];
  }
  double eigenvalues[3];
  double vector_columns[3][3];
  double* eigenvectors[3] = {vector_columns[0], vector_columns[1], vector_columns[2]};
  vtkMath::Jacobi(matrix, eigenvalues, eigenvectors);
  const double largest = *std::max_element(radii.begin(), radii.end());
  const double tolerance = 1e-9 * largest;
  // Each radius is an eigenvalue whose eigenvector is its axis (up to sign); the third axis of
  // a 2D component, radius 0, is z.
  std::set<int> matched;
  for (int k = 0; k < 3; ++k) {
    std::array<double, 3> axis = {axes[3 * k], axes[3 * k + 1], axes[3 * k + 2]};
    if (dimension == 2 && k == 2) axis = {0, 0, 1};
    int found = -1;
    for (int e = 0; e < 3; ++e) {
      if (matched.count(e) == 0 && std::abs(eigenvalues[e] - radii[k]) <= tolerance) found = e;
    }
    ASSERT_GE(found, 0) << "no eigenvalue " << radii[k];
    matched.insert(found);
    double dot = 0;
    for (int i = 0; i < 3; ++i) dot += eigenvectors[i][found] * axis[i];
    EXPECT_NEAR(std::abs(dot), 1, 1e-9) << "axis " << k;
  }
}

TEST_F(VtkOutputTest, ComponentsHoldEveryRowButTheEmptyOnes) {
  const std::vector<ComponentShape> shapes = Shapes3d();
  std::vector<std::uint32_t> labels(7 * 5 * 3, 0);
  const LabelVolume volume{labels.data(), {7, 5, 3}, 3, Oblique()};
  const WrittenFiles files = volccl::vtk_output::write(directory_, volume, shapes);
  EXPECT_EQ(files.components, directory_ / "components.vtp");
  EXPECT_TRUE(files.surfaces.empty());

  const vtkSmartPointer<vtkPolyData> components = ReadPolyData(files.components);
  const std::vector<std::uint32_t> expected_labels = {1, 3, 4};
  ASSERT_EQ(components->GetNumberOfPoints(), 3);
  ASSERT_EQ(components->GetNumberOfVerts(), 3);
  EXPECT_EQ(components->GetNumberOfCells(), 3);
  EXPECT_EQ(components->GetPoints()->GetDataType(), VTK_DOUBLE);
  vtkDataArray* label = PointArray(components, "label", 1, VTK_UNSIGNED_INT);
  vtkDataArray* count = PointArray(components, "count", 1, VTK_TYPE_UINT64);
  vtkDataArray* size = PointArray(components, "physical_size", 1, VTK_DOUBLE);
  vtkDataArray* centroid_index = PointArray(components, "centroid_index", 3, VTK_DOUBLE);
  vtkDataArray* box_min = PointArray(components, "bounding_box_min", 3, VTK_UNSIGNED_INT);
  vtkDataArray* box_max = PointArray(components, "bounding_box_max", 3, VTK_UNSIGNED_INT);
  vtkDataArray* moments = PointArray(components, "principal_moments", 3, VTK_DOUBLE);
  vtkDataArray* axes = PointArray(components, "principal_axes", 9, VTK_DOUBLE);
  vtkDataArray* radii = PointArray(components, "ellipsoid_radii", 3, VTK_DOUBLE);
  vtkDataArray* ellipsoid = PointArray(components, "ellipsoid", 9, VTK_DOUBLE);
  EXPECT_EQ(components->GetPointData()->GetScalars(), label);
  EXPECT_EQ(components->GetPointData()->GetTensors(), ellipsoid);

  vtkCellArray* vertices = components->GetVerts();
  for (vtkIdType row = 0; row < 3; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    const std::uint32_t expected_label = expected_labels[row];
    const ComponentShape& shape = shapes[expected_label - 1];
    vtkIdType vertex_size = 0;
    const vtkIdType* vertex = nullptr;
    vertices->GetCellAtId(row, vertex_size, vertex);
    ASSERT_EQ(vertex_size, 1);
    EXPECT_EQ(vertex[0], row);
    EXPECT_EQ(label->GetComponent(row, 0), expected_label);
    // 5e9 is exact in a double.
    EXPECT_EQ(count->GetComponent(row, 0), static_cast<double>(shape.count));
    EXPECT_EQ(size->GetComponent(row, 0), shape.physical_size);
    double point[3];
    components->GetPoint(row, point);
    std::array<double, 3> expected_radii;
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(point[k], shape.centroid[k]);
      EXPECT_EQ(centroid_index->GetComponent(row, k), shape.centroid_index[k]);
      EXPECT_EQ(box_min->GetComponent(row, k), shape.bounding_box_min[k]);
      EXPECT_EQ(box_max->GetComponent(row, k), shape.bounding_box_max[k]);
      EXPECT_EQ(moments->GetComponent(row, k), shape.principal_moments[k]);
      expected_radii[k] = std::sqrt(5 * shape.principal_moments[k]);
      EXPECT_EQ(radii->GetComponent(row, k), expected_radii[k]);
    }
    for (int k = 0; k < 9; ++k) EXPECT_EQ(axes->GetComponent(row, k), shape.principal_axes[k]);
    double tensor[9];
    ellipsoid->GetTuple(row, tensor);
    if (shape.count == 1) {
      for (double term : tensor) EXPECT_EQ(term, 0);
    } else {
      ExpectTensorGivesEllipsoid(tensor, expected_radii, shape.principal_axes, 3);
    }
  }
  // The exact 64-bit count, which the double comparison above cannot tell from its neighbours.
  ASSERT_EQ(count->GetDataType(), VTK_TYPE_UINT64);
  EXPECT_EQ(static_cast<const std::uint64_t*>(count->GetVoidPointer(0))[2], 5000000000ull);
}

TEST_F(VtkOutputTest, ComponentsOfA2dImageLieInThePlaneWithEllipses) {
  std::vector<ComponentShape> shapes(2);
  ComponentShape& shape = shapes[1];
  shape.count = 30;
  shape.physical_size = 11.25;
  shape.centroid_index = {4.5, 2.25, 0};
  shape.centroid = {12.25, -17.5, 0};
  shape.principal_moments = {0.25, 4, 0};
  shape.principal_axes = {0.6, 0.8, 0, -0.8, 0.6, 0, 0, 0, 0};
  shape.bounding_box_min = {2, 0, 0};
  shape.bounding_box_max = {6, 4, 0};
  std::vector<std::uint32_t> labels(7 * 5, 0);
  const LabelVolume volume{labels.data(), {7, 5, 1}, 2, Oblique2d()};
  const WrittenFiles files = volccl::vtk_output::write(directory_, volume, shapes);

  const vtkSmartPointer<vtkPolyData> components = ReadPolyData(files.components);
  ASSERT_EQ(components->GetNumberOfPoints(), 1);
  EXPECT_EQ(PointArray(components, "label", 1, VTK_UNSIGNED_INT)->GetComponent(0, 0), 2);
  double point[3];
  components->GetPoint(0, point);
  EXPECT_EQ(point[0], 12.25);
  EXPECT_EQ(point[1], -17.5);
  EXPECT_EQ(point[2], 0);
  const std::array<double, 3> expected_radii = {2 * std::sqrt(0.25), 2 * std::sqrt(4.0), 0};
  vtkDataArray* radii = PointArray(components, "ellipsoid_radii", 3, VTK_DOUBLE);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(radii->GetComponent(0, k), expected_radii[k]);
  double tensor[9];
  PointArray(components, "ellipsoid", 9, VTK_DOUBLE)->GetTuple(0, tensor);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(tensor[3 * k + 2], 0);  // nothing along z
    EXPECT_EQ(tensor[6 + k], 0);
  }
  ExpectTensorGivesEllipsoid(tensor, expected_radii, shape.principal_axes, 2);
}

// ---- surfaces.vtp ------------------------------------------------------------------------------

// A box of one label, inclusive index bounds.
struct Box {
  std::uint32_t label;
  std::array<std::uint32_t, 3> min;
  std::array<std::uint32_t, 3> max;
};

std::vector<std::uint32_t> Paint(const Extent3& extent, const std::vector<Box>& boxes) {
  std::vector<std::uint32_t> labels(extent.voxel_count(), 0);
  for (const Box& box : boxes) {
    for (std::uint32_t z = box.min[2]; z <= box.max[2]; ++z) {
      for (std::uint32_t y = box.min[1]; y <= box.max[1]; ++y) {
        for (std::uint32_t x = box.min[0]; x <= box.max[0]; ++x) {
          labels[(z * extent.y + y) * extent.x + x] = box.label;
        }
      }
    }
  }
  return labels;
}

// Rows for the boxes (only the counts and bounding boxes matter to the surfaces).
std::vector<ComponentShape> BoxShapes(const std::vector<Box>& boxes) {
  std::uint32_t largest = 0;
  for (const Box& box : boxes) largest = std::max(largest, box.label);
  std::vector<ComponentShape> shapes(largest);
  for (const Box& box : boxes) {
    ComponentShape& shape = shapes[box.label - 1];
    shape.count = 1;
    for (int k = 0; k < 3; ++k) shape.count *= box.max[k] - box.min[k] + 1;
    shape.bounding_box_min = box.min;
    shape.bounding_box_max = box.max;
  }
  return shapes;
}

vtkIdType CountFeatureEdges(vtkPolyData* surface, bool boundary) {
  vtkNew<vtkFeatureEdges> edges;
  edges->SetInputData(surface);
  edges->SetBoundaryEdges(boundary);
  edges->SetNonManifoldEdges(!boundary);
  edges->FeatureEdgesOff();
  edges->ManifoldEdgesOff();
  edges->Update();
  return edges->GetOutput()->GetNumberOfLines();
}

// Checks that surfaces.vtp holds a closed triangle surface per box, each labeled with its box's
// label, whose points lie on the box's faces, half a voxel outside its voxel centres, and whose
// normals point out of it.
void ExpectBoxSurfaces(const fs::path& path, const ImageGeometry& geometry,
                       const std::vector<Box>& boxes) {
  const vtkSmartPointer<vtkPolyData> surface = ReadPolyData(path);
  ASSERT_GT(surface->GetNumberOfPolys(), 0);
  EXPECT_EQ(surface->GetNumberOfCells(), surface->GetNumberOfPolys());
  EXPECT_EQ(CountFeatureEdges(surface, true), 0) << "boundary edges";
  EXPECT_EQ(CountFeatureEdges(surface, false), 0) << "non-manifold edges";
  vtkDataArray* label = surface->GetCellData()->GetArray("label");
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->GetDataType(), VTK_UNSIGNED_INT);
  ASSERT_EQ(label->GetNumberOfTuples(), surface->GetNumberOfCells());
  vtkDataArray* normals = surface->GetPointData()->GetNormals();
  ASSERT_NE(normals, nullptr);

  std::map<std::uint32_t, const Box*> box_of;
  for (const Box& box : boxes) box_of[box.label] = &box;
  std::set<std::uint32_t> labels_seen;
  std::map<vtkIdType, std::uint32_t> label_of_point;
  for (vtkIdType cell = 0; cell < surface->GetNumberOfCells(); ++cell) {
    const auto cell_label = static_cast<std::uint32_t>(label->GetComponent(cell, 0));
    labels_seen.insert(cell_label);
    ASSERT_EQ(box_of.count(cell_label), 1u) << "label " << cell_label;
    vtkIdType size = 0;
    const vtkIdType* ids = nullptr;
    surface->GetPolys()->GetCellAtId(cell, size, ids);
    ASSERT_EQ(size, 3);
    for (int k = 0; k < 3; ++k) {
      const auto [it, inserted] = label_of_point.emplace(ids[k], cell_label);
      EXPECT_EQ(it->second, cell_label) << "point " << ids[k] << " shared by two labels";
    }
  }
  EXPECT_EQ(labels_seen.size(), boxes.size());
  ASSERT_EQ(static_cast<vtkIdType>(label_of_point.size()), surface->GetNumberOfPoints());

  std::map<std::uint32_t, vtkIdType> points_per_label;
  for (const auto& [id, point_label] : label_of_point) {
    const Box& box = *box_of.at(point_label);
    ++points_per_label[point_label];
    double point[3];
    surface->GetPoint(id, point);
    const std::array<double, 3> index = ToIndex(geometry, point);
    // Float coordinates: a few units in the last place of values about 50.
    constexpr double kTolerance = 1e-4;
    int on_faces = 0;
    std::array<double, 3> centre;
    for (int k = 0; k < 3; ++k) {
      const double low = box.min[k] - 0.5;
      const double high = box.max[k] + 0.5;
      centre[k] = (low + high) / 2;
      EXPECT_GE(index[k], low - kTolerance) << "point " << id;
      EXPECT_LE(index[k], high + kTolerance) << "point " << id;
      if (std::abs(index[k] - low) < kTolerance || std::abs(index[k] - high) < kTolerance) {
        ++on_faces;
      }
    }
    // Halfway between a voxel of the box and its outside neighbour: on exactly one face.
    EXPECT_EQ(on_faces, 1) << "point " << id << " at index (" << index[0] << ", " << index[1]
                           << ", " << index[2] << ")";
    const std::array<double, 3> centre_physical = ToPhysical(geometry, centre);
    double normal[3];
    normals->GetTuple(id, normal);
    EXPECT_NEAR(vtkMath::Norm(normal), 1, 1e-6);
    double outward = 0;
    for (int k = 0; k < 3; ++k) outward += normal[k] * (point[k] - centre_physical[k]);
    EXPECT_GT(outward, 0) << "point " << id;
  }
  // One point per voxel face on the box's surface: 2 (xy + xz + yz) face areas.
  for (const Box& box : boxes) {
    const vtkIdType x = box.max[0] - box.min[0] + 1;
    const vtkIdType y = box.max[1] - box.min[1] + 1;
    const vtkIdType z = box.max[2] - box.min[2] + 1;
    EXPECT_EQ(points_per_label[box.label], 2 * (x * y + x * z + y * z)) << "label " << box.label;
  }
}

TEST_F(VtkOutputTest, SurfaceOfACubeIsClosedOnItsFaces) {
  const Extent3 extent{8, 8, 8};
  const std::vector<Box> boxes = {{1, {2, 2, 2}, {5, 5, 5}}};
  const std::vector<std::uint32_t> labels = Paint(extent, boxes);
  const LabelVolume volume{labels.data(), extent, 3, Oblique()};
  const WrittenFiles files =
      volccl::vtk_output::write(directory_, volume, BoxShapes(boxes), {LabelData::point, true});
  EXPECT_EQ(files.surfaces, directory_ / "surfaces.vtp");
  ExpectBoxSurfaces(files.surfaces, Oblique(), boxes);
  EXPECT_EQ(ReadPolyData(files.surfaces)->GetNumberOfPoints(), 96);
}

TEST_F(VtkOutputTest, SurfacesAreClosedAtTheVolumeBorder) {
  // The whole volume, and a one-voxel-thick volume, as one component.
  for (const Extent3 extent : {Extent3{7, 5, 3}, Extent3{7, 5, 1}}) {
    SCOPED_TRACE("extent z " + std::to_string(extent.z));
    const std::uint32_t z = static_cast<std::uint32_t>(extent.z) - 1;
    const std::vector<Box> boxes = {{1, {0, 0, 0}, {6, 4, z}}};
    const std::vector<std::uint32_t> labels = Paint(extent, boxes);
    const LabelVolume volume{labels.data(), extent, 3, Oblique()};
    const WrittenFiles files =
        volccl::vtk_output::write(directory_, volume, BoxShapes(boxes), {LabelData::cell, true});
    ExpectBoxSurfaces(files.surfaces, Oblique(), boxes);
  }
}

TEST_F(VtkOutputTest, SurfacesOfTwoComponentsCarryTheirLabels) {
  const Extent3 extent{9, 8, 7};
  // Label 2 is empty; the boxes touch along x, which the surfaces must keep apart.
  const std::vector<Box> boxes = {{1, {0, 1, 1}, {3, 3, 4}}, {3, {4, 2, 0}, {7, 6, 6}}};
  const std::vector<std::uint32_t> labels = Paint(extent, boxes);
  const LabelVolume volume{labels.data(), extent, 3, Oblique()};
  std::vector<ComponentShape> shapes = BoxShapes(boxes);
  ASSERT_EQ(shapes[1].count, 0u);
  const WrittenFiles files =
      volccl::vtk_output::write(directory_, volume, shapes, {LabelData::point, true});
  ExpectBoxSurfaces(files.surfaces, Oblique(), boxes);
}

// 64-bit labels: labels.vti holds them as uint64, and the surfaces are those of 32-bit ones.
TEST_F(VtkOutputTest, WideLabelsAreWrittenAsTheyAre) {
  const Extent3 extent{9, 8, 7};
  const std::vector<Box> boxes = {{1, {0, 1, 1}, {3, 3, 4}}, {3, {4, 2, 0}, {7, 6, 6}}};
  const std::vector<std::uint32_t> narrow = Paint(extent, boxes);
  const std::vector<std::uint64_t> wide(narrow.begin(), narrow.end());
  LabelVolume volume{nullptr, extent, 3, Oblique()};
  volume.wide_labels = wide.data();
  const WrittenFiles files =
      volccl::vtk_output::write(directory_, volume, BoxShapes(boxes), {LabelData::point, true});
  ExpectBoxSurfaces(files.surfaces, Oblique(), boxes);
  const vtkSmartPointer<vtkImageData> image = ReadImage(files.image);
  vtkDataArray* labels = image->GetPointData()->GetScalars();
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(labels->GetDataType(), VTK_TYPE_UINT64);
  ASSERT_EQ(labels->GetNumberOfTuples(), static_cast<vtkIdType>(wide.size()));
  for (std::size_t i = 0; i < wide.size(); ++i) {
    ASSERT_EQ(labels->GetComponent(static_cast<vtkIdType>(i), 0), wide[i]) << "voxel " << i;
  }

  volume.labels = narrow.data();  // both: refused
  EXPECT_THROW(volccl::vtk_output::write(directory_, volume, {}, {}), std::invalid_argument);
}

TEST_F(VtkOutputTest, SurfacesOfA2dImageAreClosedContours) {
  const Extent3 extent{9, 7, 1};
  // A rectangle inside, and one in a corner.
  const std::vector<Box> boxes = {{1, {2, 3, 0}, {4, 4, 0}}, {2, {6, 0, 0}, {8, 1, 0}}};
  const std::vector<std::uint32_t> labels = Paint(extent, boxes);
  const ImageGeometry geometry = Oblique2d();
  const LabelVolume volume{labels.data(), extent, 2, geometry};
  const WrittenFiles files =
      volccl::vtk_output::write(directory_, volume, BoxShapes(boxes), {LabelData::point, true});

  const vtkSmartPointer<vtkPolyData> contours = ReadPolyData(files.surfaces);
  ASSERT_GT(contours->GetNumberOfLines(), 0);
  EXPECT_EQ(contours->GetNumberOfCells(), contours->GetNumberOfLines());
  vtkDataArray* label = contours->GetCellData()->GetArray("label");
  ASSERT_NE(label, nullptr);
  ASSERT_EQ(label->GetNumberOfTuples(), contours->GetNumberOfCells());
  // Closed: every point ends exactly two segments of its own label.
  std::map<vtkIdType, int> segment_ends;
  std::map<vtkIdType, std::uint32_t> label_of_point;
  for (vtkIdType cell = 0; cell < contours->GetNumberOfCells(); ++cell) {
    vtkIdType size = 0;
    const vtkIdType* ids = nullptr;
    contours->GetLines()->GetCellAtId(cell, size, ids);
    ASSERT_EQ(size, 2);
    const auto cell_label = static_cast<std::uint32_t>(label->GetComponent(cell, 0));
    for (int k = 0; k < 2; ++k) {
      ++segment_ends[ids[k]];
      const auto [it, inserted] = label_of_point.emplace(ids[k], cell_label);
      EXPECT_EQ(it->second, cell_label);
    }
  }
  ASSERT_EQ(static_cast<vtkIdType>(segment_ends.size()), contours->GetNumberOfPoints());
  std::map<std::uint32_t, int> points_per_label;
  const ImageGeometry plane = In3d(geometry, 2);
  for (const auto& [id, ends] : segment_ends) {
    EXPECT_EQ(ends, 2) << "point " << id;
    const Box& box = boxes[label_of_point.at(id) - 1];
    ++points_per_label[box.label];
    double point[3];
    contours->GetPoint(id, point);
    EXPECT_EQ(point[2], 0);
    const std::array<double, 3> index = ToIndex(plane, point);
    int on_sides = 0;
    for (int k = 0; k < 2; ++k) {
      const double low = box.min[k] - 0.5;
      const double high = box.max[k] + 0.5;
      EXPECT_GE(index[k], low - 1e-4);
      EXPECT_LE(index[k], high + 1e-4);
      if (std::abs(index[k] - low) < 1e-4 || std::abs(index[k] - high) < 1e-4) ++on_sides;
    }
    EXPECT_EQ(on_sides, 1) << "point " << id;
  }
  EXPECT_EQ(points_per_label[1], 2 * (3 + 2));
  EXPECT_EQ(points_per_label[2], 2 * (3 + 2));
}

// ---- volccl.pvd and errors ---------------------------------------------------------------------

// The DataSet entries of a .pvd: part -> file.
std::map<int, std::string> CollectionEntries(const fs::path& path) {
  const std::string text = ReadText(path);
  EXPECT_NE(text.find("<VTKFile type=\"Collection\" version=\"0.1\">"), std::string::npos);
  std::map<int, std::string> entries;
  const std::regex data_set("<DataSet part=\"(\\d+)\"[^>]* file=\"([^\"]+)\"\\s*/>");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), data_set);
       it != std::sregex_iterator(); ++it) {
    entries[std::stoi((*it)[1])] = (*it)[2];
  }
  return entries;
}

TEST_F(VtkOutputTest, CollectionListsTheFilesByRelativeName) {
  const Extent3 extent{8, 8, 8};
  const std::vector<Box> boxes = {{1, {2, 2, 2}, {5, 5, 5}}, {2, {0, 0, 0}, {0, 0, 0}}};
  const std::vector<std::uint32_t> labels = Paint(extent, boxes);
  const LabelVolume volume{labels.data(), extent, 3, Oblique()};
  for (const bool surfaces : {false, true}) {
    SCOPED_TRACE(surfaces ? "with surfaces" : "without surfaces");
    const WrittenFiles files = volccl::vtk_output::write(directory_, volume, BoxShapes(boxes),
                                                         {LabelData::point, surfaces});
    EXPECT_EQ(files.collection, directory_ / "volccl.pvd");
    std::map<int, std::string> expected = {{0, "labels.vti"}, {1, "components.vtp"}};
    if (surfaces) expected[2] = "surfaces.vtp";
    const std::map<int, std::string> entries = CollectionEntries(files.collection);
    EXPECT_EQ(entries, expected);
    // What each entry names, resolved from the collection's folder, is what was written.
    EXPECT_EQ(ReadImage(directory_ / entries.at(0))->GetNumberOfPoints(), 512);
    EXPECT_EQ(ReadPolyData(directory_ / entries.at(1))->GetNumberOfPoints(), 2);
    if (surfaces) {
      EXPECT_EQ(ReadPolyData(directory_ / entries.at(2))->GetNumberOfPoints(), 96 + 6);
    }
  }
}

TEST_F(VtkOutputTest, UnwritableDirectoryThrowsNamingTheFile) {
  std::vector<std::uint32_t> labels(4, 1);
  const LabelVolume volume{labels.data(), {2, 2, 1}, 3, ImageGeometry{}};
  // A regular file where the directory should be: unwritable even for root.
  const fs::path not_a_directory = directory_ / "file";
  std::ofstream(not_a_directory) << "x";
  for (const fs::path& directory : {not_a_directory, directory_ / "missing" / "deeper"}) {
    try {
      volccl::vtk_output::write(directory, volume, {});
      ADD_FAILURE() << "no exception for " << directory;
    } catch (const std::runtime_error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("cannot write '" + (directory / "labels.vti").string() + "': "),
                std::string::npos)
          << message;
      EXPECT_TRUE(message.find("Not a directory") != std::string::npos ||
                  message.find("No such file or directory") != std::string::npos)
          << message;
    }
  }
}

TEST_F(VtkOutputTest, EveryFileIsChecked) {
  std::vector<ComponentShape> shapes(1);
  shapes[0].count = 4;
  shapes[0].bounding_box_max = {1, 1, 0};
  std::vector<std::uint32_t> labels(4, 1);
  const LabelVolume volume{labels.data(), {2, 2, 1}, 3, ImageGeometry{}};
  // A directory in the way of each file in turn.
  for (const char* name : {"labels.vti", "components.vtp", "surfaces.vtp", "volccl.pvd"}) {
    SCOPED_TRACE(name);
    const fs::path blocked = directory_ / name;
    fs::create_directory(blocked);
    try {
      volccl::vtk_output::write(directory_, volume, shapes, {LabelData::point, true});
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("cannot write '" + blocked.string() + "'"),
                std::string::npos)
          << error.what();
    }
    fs::remove(blocked);
  }
}

TEST_F(VtkOutputTest, RejectsWhatIsNotAnImage) {
  std::vector<std::uint32_t> labels(12, 0);
  const auto write = [this](const LabelVolume& volume, const std::vector<ComponentShape>& shapes) {
    volccl::vtk_output::write(directory_, volume, shapes, {LabelData::point, true});
  };
  EXPECT_THROW(write({nullptr, {2, 2, 3}, 3, {}}, {}), std::invalid_argument);
  EXPECT_THROW(write({labels.data(), {2, 2, 3}, 2, {}}, {}), std::invalid_argument);
  EXPECT_THROW(write({labels.data(), {2, 2, 3}, 4, {}}, {}), std::invalid_argument);
  EXPECT_THROW(write({labels.data(), {0, 2, 3}, 3, {}}, {}), std::invalid_argument);
  std::vector<ComponentShape> outside(1);
  outside[0].count = 1;
  outside[0].bounding_box_max = {0, 2, 0};  // y beyond the 2 rows
  EXPECT_THROW(write({labels.data(), {2, 2, 3}, 3, {}}, outside), std::invalid_argument);
}

}  // namespace
