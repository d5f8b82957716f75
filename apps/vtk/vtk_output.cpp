#include "vtk_output.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDiscreteFlyingEdges2D.h>
#include <vtkDiscreteFlyingEdges3D.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataAlgorithm.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt64Array.h>
#include <vtkTypeUInt32Array.h>
#include <vtkTypeUInt64Array.h>
#include <vtkUnsignedCharArray.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkXMLWriter.h>

namespace volccl::vtk_output {
namespace {

namespace fs = std::filesystem;

std::string Quoted(const fs::path& path) { return "'" + path.string() + "'"; }

void Validate(const LabelVolume& volume) {
  const std::string where = "volccl::vtk_output::write: ";
  if ((volume.labels == nullptr) == (volume.wide_labels == nullptr)) {
    throw std::invalid_argument(where + "give labels or wide_labels, one of them");
  }
  if (volume.dimension != 2 && volume.dimension != 3) {
    throw std::invalid_argument(where + "dimension " + std::to_string(volume.dimension) +
                                " (expected 2 or 3)");
  }
  const Extent3& extent = volume.extent;
  if (extent.voxel_count() == 0) {
    throw std::invalid_argument(where + "empty volume of " + extent.to_string() + " voxels");
  }
  if (volume.dimension == 2 && extent.z != 1) {
    throw std::invalid_argument(where + "a 2D image of " + extent.to_string() +
                                " voxels (expected z == 1)");
  }
  // VTK counts points along an axis in an int; cell data and padding add up to 2.
  if (std::max({extent.x, extent.y, extent.z}) > static_cast<std::uint64_t>(INT_MAX - 2)) {
    throw std::invalid_argument(where + "a volume of " + extent.to_string() +
                                " voxels is too large for VTK's image data");
  }
}

std::uint64_t LabelAt(const LabelVolume& volume, std::uint64_t voxel) {
  return volume.labels != nullptr ? volume.labels[voxel] : volume.wide_labels[voxel];
}

// The geometry as a 3D one: a 2D image keeps the upper-left 2x2 block of its direction and the
// first two entries of its spacing and origin, and lies in the plane z = 0.
ImageGeometry GeometryIn3d(const LabelVolume& volume) {
  if (volume.dimension == 3) return volume.geometry;
  const ImageGeometry& g = volume.geometry;
  ImageGeometry flat;
  flat.spacing = {g.spacing[0], g.spacing[1], 1};
  flat.origin = {g.origin[0], g.origin[1], 0};
  flat.direction = {g.direction[0], g.direction[1], 0, g.direction[3], g.direction[4], 0, 0, 0, 1};
  return flat;
}

// origin + direction * (index .* spacing)
std::array<double, 3> ToPhysical(const ImageGeometry& g, const double index[3]) {
  std::array<double, 3> physical = g.origin;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) physical[i] += g.direction[3 * i + j] * g.spacing[j] * index[j];
  }
  return physical;
}

// Normals map by the inverse transpose of M = direction * diag(spacing), which is the cofactor
// matrix of M over its determinant; only the determinant's sign matters before normalizing.
std::array<double, 9> NormalTransform(const ImageGeometry& g) {
  std::array<double, 9> m;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m[3 * i + j] = g.direction[3 * i + j] * g.spacing[j];
  }
  const auto at = [&m](int i, int j) { return m[3 * (i % 3) + (j % 3)]; };
  std::array<double, 9> cofactor;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      cofactor[3 * i + j] =
          at(i + 1, j + 1) * at(i + 2, j + 2) - at(i + 1, j + 2) * at(i + 2, j + 1);
    }
  }
  const double determinant = m[0] * cofactor[0] + m[1] * cofactor[1] + m[2] * cofactor[2];
  if (determinant < 0) {
    for (double& c : cofactor) c = -c;
  }
  return cofactor;
}

// Records the errors a VTK object reports instead of letting VTK print them.
class ErrorRecorder {
 public:
  explicit ErrorRecorder(vtkObject* object) : object_(object) {
    callback_->SetClientData(&last_error_);
    callback_->SetCallback([](vtkObject*, unsigned long, void* client_data, void* call_data) {
      if (call_data != nullptr) {
        *static_cast<std::string*>(client_data) = static_cast<const char*>(call_data);
      }
    });
    tag_ = object->AddObserver(vtkCommand::ErrorEvent, callback_);
  }
  ~ErrorRecorder() { object_->RemoveObserver(tag_); }
  ErrorRecorder(const ErrorRecorder&) = delete;
  ErrorRecorder& operator=(const ErrorRecorder&) = delete;

  // The message alone, without VTK's "ERROR: In FILE, line N" and "CLASS (ADDRESS): ".
  std::string message() const {
    std::string text = last_error_.substr(last_error_.find('\n') + 1);
    const std::size_t after_object = text.find("): ");
    if (after_object != std::string::npos) text.erase(0, after_object + 3);
    return text.substr(0, text.find('\n'));
  }

 private:
  vtkObject* object_;
  vtkNew<vtkCallbackCommand> callback_;
  unsigned long tag_ = 0;
  std::string last_error_;
};

void WriteXml(vtkXMLWriter* writer, vtkDataObject* data, const fs::path& path) {
  writer->SetInputData(data);
  writer->SetFileName(path.c_str());
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();  // arrays of 4 GiB and more
  // VTK would print the writer's errors, and its executive's that the writer failed; the
  // writer's go into the exception.
  const ErrorRecorder errors(writer);
  const ErrorRecorder executive_errors(writer->GetExecutive());
  const bool written = writer->Write() == 1;
  const unsigned long code = writer->GetErrorCode();
  const std::string vtk_message = errors.message();
  if (written && code == vtkErrorCode::NoError && vtk_message.empty()) return;
  std::string reason =
      code != vtkErrorCode::NoError ? vtkErrorCode::GetStringFromErrorCode(code) : vtk_message;
  if (reason.empty()) reason = "VTK's writer failed";
  throw std::runtime_error("volccl: cannot write " + Quoted(path) + ": " + reason);
}

// labels.vti
void WriteImage(const fs::path& path, const LabelVolume& volume, const ImageGeometry& geometry,
                LabelData label_data) {
  const Extent3& extent = volume.extent;
  std::array<int, 3> dimensions = {static_cast<int>(extent.x), static_cast<int>(extent.y),
                                   static_cast<int>(extent.z)};
  std::array<double, 3> origin = geometry.origin;
  if (label_data == LabelData::cell) {
    // The points are the voxels' corners: one more than the voxels along each axis of the image
    // (not along z of a 2D image), starting half a voxel before the first centre.
    double half_voxel[3] = {-0.5, -0.5, volume.dimension == 3 ? -0.5 : 0.0};
    origin = ToPhysical(geometry, half_voxel);
    for (unsigned axis = 0; axis < volume.dimension; ++axis) ++dimensions[axis];
  }

  // The writer only reads the labels: wrap the caller's memory instead of copying it.
  vtkSmartPointer<vtkDataArray> labels;
  if (volume.labels != nullptr) {
    auto narrow = vtkSmartPointer<vtkTypeUInt32Array>::New();
    narrow->SetArray(const_cast<std::uint32_t*>(volume.labels),
                     static_cast<vtkIdType>(extent.voxel_count()), /*save=*/1);
    labels = narrow;
  } else {
    auto wide = vtkSmartPointer<vtkTypeUInt64Array>::New();
    // vtkTypeUInt64 is unsigned long long, std::uint64_t unsigned long: the same 64 bits.
    static_assert(sizeof(vtkTypeUInt64) == sizeof(std::uint64_t), "64-bit labels");
    wide->SetArray(reinterpret_cast<vtkTypeUInt64*>(const_cast<std::uint64_t*>(volume.wide_labels)),
                   static_cast<vtkIdType>(extent.voxel_count()), /*save=*/1);
    labels = wide;
  }
  labels->SetName("labels");

  vtkNew<vtkImageData> image;
  image->SetDimensions(dimensions.data());
  image->SetSpacing(geometry.spacing.data());
  image->SetOrigin(origin.data());
  image->SetDirectionMatrix(geometry.direction.data());
  if (label_data == LabelData::point) {
    image->GetPointData()->SetScalars(labels);
  } else {
    image->GetCellData()->SetScalars(labels);
  }
  vtkNew<vtkXMLImageDataWriter> writer;
  WriteXml(writer, image, path);
}

template <typename Array>
vtkSmartPointer<Array> AddArray(vtkPointData* point_data, const char* name, int components,
                                vtkIdType tuples) {
  auto array = vtkSmartPointer<Array>::New();
  array->SetName(name);
  array->SetNumberOfComponents(components);
  array->SetNumberOfTuples(tuples);
  point_data->AddArray(array);
  return array;
}

// The array "value" of a label map's components, int64 or uint64 as the input's type is signed or
// not; `rows` tuples to be set with SetValueOfRow.
class ValueArray {
 public:
  explicit ValueArray(const ComponentValues* values) : values_(values) {
    if (values_ == nullptr) return;
    if (values_->is_unsigned) {
      array_ = vtkSmartPointer<vtkTypeUInt64Array>::New();
    } else {
      array_ = vtkSmartPointer<vtkTypeInt64Array>::New();
    }
    array_->SetName("value");
  }
  vtkDataArray* Array() const { return array_; }
  // Appends the value of `label`.
  void Append(std::uint32_t label) {
    if (values_ == nullptr) return;
    const std::int64_t value = values_->values.at(label - 1);
    if (values_->is_unsigned) {
      static_cast<vtkTypeUInt64Array*>(array_.Get())
          ->InsertNextValue(static_cast<std::uint64_t>(value));
    } else {
      static_cast<vtkTypeInt64Array*>(array_.Get())->InsertNextValue(value);
    }
  }

 private:
  const ComponentValues* values_;
  vtkSmartPointer<vtkDataArray> array_;
};

// The semi-axes of the solid ellipsoid (ellipse) with the principal moments `lambda`: a solid
// ellipsoid's variance along a semi-axis r is r^2 / 5, a solid ellipse's r^2 / 4.
std::array<double, 3> EllipsoidRadii(const ComponentShape& shape, unsigned dimension) {
  std::array<double, 3> radii = {0, 0, 0};
  const double factor = dimension == 3 ? 5.0 : 4.0;
  for (unsigned k = 0; k < dimension; ++k) {
    radii[k] = std::sqrt(factor * std::max(0.0, shape.principal_moments[k]));  // -0 rounding
  }
  return radii;
}

// components.vtp
void WriteComponents(const fs::path& path, const std::vector<ComponentShape>& shapes,
                     unsigned dimension, const ComponentValues* values) {
  const auto rows = static_cast<vtkIdType>(std::count_if(
      shapes.begin(), shapes.end(), [](const ComponentShape& s) { return s.count != 0; }));
  vtkNew<vtkPolyData> components;
  vtkNew<vtkPoints> centroids;
  centroids->SetDataTypeToDouble();
  centroids->SetNumberOfPoints(rows);
  vtkNew<vtkCellArray> vertices;
  vertices->AllocateExact(rows, rows);
  vtkPointData* point_data = components->GetPointData();
  auto label = AddArray<vtkTypeUInt32Array>(point_data, "label", 1, rows);
  auto count = AddArray<vtkTypeUInt64Array>(point_data, "count", 1, rows);
  auto physical_size = AddArray<vtkDoubleArray>(point_data, "physical_size", 1, rows);
  auto centroid_index = AddArray<vtkDoubleArray>(point_data, "centroid_index", 3, rows);
  auto box_min = AddArray<vtkTypeUInt32Array>(point_data, "bounding_box_min", 3, rows);
  auto box_max = AddArray<vtkTypeUInt32Array>(point_data, "bounding_box_max", 3, rows);
  auto moments = AddArray<vtkDoubleArray>(point_data, "principal_moments", 3, rows);
  auto axes = AddArray<vtkDoubleArray>(point_data, "principal_axes", 9, rows);
  auto radii = AddArray<vtkDoubleArray>(point_data, "ellipsoid_radii", 3, rows);
  auto ellipsoid = AddArray<vtkDoubleArray>(point_data, "ellipsoid", 9, rows);
  point_data->SetScalars(label);
  point_data->SetTensors(ellipsoid);
  ValueArray value(values);
  if (value.Array() != nullptr) point_data->AddArray(value.Array());

  vtkIdType row = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const ComponentShape& shape = shapes[i];
    if (shape.count == 0) continue;
    centroids->SetPoint(row, shape.centroid.data());
    vertices->InsertNextCell(1, &row);
    label->SetValue(row, static_cast<std::uint32_t>(i + 1));
    value.Append(static_cast<std::uint32_t>(i + 1));
    count->SetValue(row, shape.count);
    physical_size->SetValue(row, shape.physical_size);
    const std::array<double, 3> r = EllipsoidRadii(shape, dimension);
    for (int k = 0; k < 3; ++k) {
      centroid_index->SetTypedComponent(row, k, shape.centroid_index[k]);
      box_min->SetTypedComponent(row, k, shape.bounding_box_min[k]);
      box_max->SetTypedComponent(row, k, shape.bounding_box_max[k]);
      moments->SetTypedComponent(row, k, shape.principal_moments[k]);
      radii->SetTypedComponent(row, k, r[k]);
    }
    for (int k = 0; k < 9; ++k) axes->SetTypedComponent(row, k, shape.principal_axes[k]);
    // sum_k r_k a_k a_k^T: eigenvalues r_k, eigenvectors a_k. Computed once per pair of
    // entries, so that it is exactly symmetric.
    for (int a = 0; a < 3; ++a) {
      for (int b = a; b < 3; ++b) {
        double term = 0;
        for (int k = 0; k < 3; ++k) {
          term += r[k] * shape.principal_axes[3 * k + a] * shape.principal_axes[3 * k + b];
        }
        ellipsoid->SetTypedComponent(row, 3 * a + b, term);
        ellipsoid->SetTypedComponent(row, 3 * b + a, term);
      }
    }
    ++row;
  }
  components->SetPoints(centroids);
  components->SetVerts(vertices);
  vtkNew<vtkXMLPolyDataWriter> writer;
  WriteXml(writer, components, path);
}

// surfaces.vtp: each component's surface from the mask of its bounding box padded by one
// background voxel, in index space, then mapped to physical space.
void WriteSurfaces(const fs::path& path, const LabelVolume& volume, const ImageGeometry& geometry,
                   const std::vector<ComponentShape>& shapes) {
  const bool is_3d = volume.dimension == 3;
  const Extent3& extent = volume.extent;
  const std::array<std::uint64_t, 3> sides = {extent.x, extent.y, extent.z};
  const std::array<double, 9> normal_transform = NormalTransform(geometry);

  vtkSmartPointer<vtkPolyDataAlgorithm> contour;
  if (is_3d) {
    auto flying_edges = vtkSmartPointer<vtkDiscreteFlyingEdges3D>::New();
    flying_edges->ComputeNormalsOn();
    flying_edges->ComputeGradientsOff();
    flying_edges->ComputeScalarsOff();
    flying_edges->SetValue(0, 1);
    contour = flying_edges;
  } else {
    auto flying_edges = vtkSmartPointer<vtkDiscreteFlyingEdges2D>::New();
    flying_edges->ComputeScalarsOff();
    flying_edges->SetValue(0, 1);
    contour = flying_edges;
  }
  std::vector<std::uint8_t> mask_values;
  vtkNew<vtkUnsignedCharArray> mask;
  vtkNew<vtkImageData> mask_image;
  contour->SetInputData(mask_image);

  vtkNew<vtkPoints> points;  // float, as the contour's
  vtkNew<vtkFloatArray> normals;
  normals->SetName("Normals");
  normals->SetNumberOfComponents(3);
  vtkNew<vtkCellArray> cells;
  vtkNew<vtkTypeUInt32Array> cell_labels;
  cell_labels->SetName("label");
  ValueArray cell_values(volume.values);

  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const ComponentShape& shape = shapes[i];
    if (shape.count == 0) continue;
    const auto label = static_cast<std::uint32_t>(i + 1);
    // The padded box [low, high] in index space; it may reach one voxel beyond the volume.
    std::array<std::int64_t, 3> low = {0, 0, 0};
    std::array<std::int64_t, 3> high = {0, 0, 0};
    std::array<int, 3> box = {1, 1, 1};
    for (unsigned axis = 0; axis < volume.dimension; ++axis) {
      if (shape.bounding_box_min[axis] > shape.bounding_box_max[axis] ||
          shape.bounding_box_max[axis] >= sides[axis]) {
        throw std::invalid_argument("volccl::vtk_output::write: the bounding box of label " +
                                    std::to_string(label) + " lies outside the volume of " +
                                    extent.to_string() + " voxels");
      }
      low[axis] = static_cast<std::int64_t>(shape.bounding_box_min[axis]) - 1;
      high[axis] = static_cast<std::int64_t>(shape.bounding_box_max[axis]) + 1;
      box[axis] = static_cast<int>(high[axis] - low[axis] + 1);
    }
    const std::size_t box_voxels = static_cast<std::size_t>(box[0]) * box[1] * box[2];
    mask_values.assign(box_voxels, 0);
    const auto inside = [&sides](std::int64_t index, int axis) {
      return index >= 0 && static_cast<std::uint64_t>(index) < sides[axis];
    };
    for (int z = 0; z < box[2]; ++z) {
      const std::int64_t vz = low[2] + z;
      if (!inside(vz, 2)) continue;
      for (int y = 0; y < box[1]; ++y) {
        const std::int64_t vy = low[1] + y;
        if (!inside(vy, 1)) continue;
        const std::uint64_t row = (vz * extent.y + vy) * extent.x;
        std::uint8_t* mask_row =
            mask_values.data() + (static_cast<std::size_t>(z) * box[1] + y) * box[0];
        for (int x = 0; x < box[0]; ++x) {
          const std::int64_t vx = low[0] + x;
          mask_row[x] = inside(vx, 0) && LabelAt(volume, row + vx) == label;
        }
      }
    }
    mask->SetArray(mask_values.data(), static_cast<vtkIdType>(box_voxels), /*save=*/1);
    mask_image->SetDimensions(box.data());
    mask_image->SetOrigin(static_cast<double>(low[0]), static_cast<double>(low[1]),
                          static_cast<double>(low[2]));
    mask_image->GetPointData()->SetScalars(mask);
    contour->Modified();
    contour->Update();
    vtkPolyData* surface = contour->GetOutput();

    const vtkIdType first_point = points->GetNumberOfPoints();
    vtkDataArray* surface_normals = surface->GetPointData()->GetNormals();
    for (vtkIdType p = 0; p < surface->GetNumberOfPoints(); ++p) {
      double index[3];
      surface->GetPoint(p, index);
      points->InsertNextPoint(ToPhysical(geometry, index).data());
      if (surface_normals == nullptr) continue;
      double n[3];
      surface_normals->GetTuple(p, n);
      double physical[3] = {0, 0, 0};
      for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) physical[a] += normal_transform[3 * a + b] * n[b];
      }
      const double length = std::sqrt(physical[0] * physical[0] + physical[1] * physical[1] +
                                      physical[2] * physical[2]);
      if (length > 0) {
        for (double& c : physical) c /= length;
      }
      normals->InsertNextTuple(physical);
    }
    vtkCellArray* surface_cells = is_3d ? surface->GetPolys() : surface->GetLines();
    cells->Append(surface_cells, first_point);
    for (vtkIdType c = 0; c < surface_cells->GetNumberOfCells(); ++c) {
      cell_labels->InsertNextValue(label);
      cell_values.Append(label);
    }
  }

  vtkNew<vtkPolyData> surfaces;
  surfaces->SetPoints(points);
  if (is_3d) {
    surfaces->SetPolys(cells);
    surfaces->GetPointData()->SetNormals(normals);
  } else {
    surfaces->SetLines(cells);
  }
  surfaces->GetCellData()->SetScalars(cell_labels);
  if (cell_values.Array() != nullptr) surfaces->GetCellData()->AddArray(cell_values.Array());
  vtkNew<vtkXMLPolyDataWriter> writer;
  WriteXml(writer, surfaces, path);
}

// volccl.pvd: the files as the parts of one data set, so ParaView opens them together.
void WriteCollection(const fs::path& path, const WrittenFiles& files) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out.is_open()) {
    throw std::runtime_error("volccl: cannot write " + Quoted(path) + ": " + std::strerror(errno));
  }
  out << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"Collection\" version=\"0.1\">\n"
      << "  <Collection>\n";
  int part = 0;
  for (const fs::path& file : {files.image, files.components, files.surfaces}) {
    if (file.empty()) continue;
    out << "    <DataSet part=\"" << part++ << "\" name=\"" << file.stem().string() << "\" file=\""
        << file.filename().string() << "\"/>\n";
  }
  out << "  </Collection>\n"
      << "</VTKFile>\n";
  out.close();
  if (!out) throw std::runtime_error("volccl: cannot write " + Quoted(path));
}

}  // namespace

WrittenFiles write(const fs::path& directory, const LabelVolume& volume,
                   const std::vector<ComponentShape>& shapes, const Options& options) {
  Validate(volume);
  if (shapes.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("volccl::vtk_output::write: " + std::to_string(shapes.size()) +
                                " components are more than the scene's 32-bit label arrays "
                                "number");
  }
  const ImageGeometry geometry = GeometryIn3d(volume);
  WrittenFiles files;
  files.image = directory / kImageFile;
  files.components = directory / kComponentsFile;
  files.collection = directory / kCollectionFile;
  WriteImage(files.image, volume, geometry, options.label_data);
  WriteComponents(files.components, shapes, volume.dimension, volume.values);
  if (options.surfaces) {
    files.surfaces = directory / kSurfacesFile;
    WriteSurfaces(files.surfaces, volume, geometry, shapes);
  }
  WriteCollection(files.collection, files);
  return files;
}

}  // namespace volccl::vtk_output
