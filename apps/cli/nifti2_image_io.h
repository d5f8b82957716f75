// NIfTI-2 files (.nii, .nii.gz) as an ITK ImageIO, for the images NIfTI-1 cannot describe: its
// header keeps each side in 16 bits (at most 32767 voxels), NIfTI-2's in 64. The ITK that volccl
// builds against reads and writes NIfTI-1 only. The geometry maps as ITK's NiftiImageIO maps
// it: NIfTI's world is RAS+, ITK's LPS+, so x and y change sign.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>

#include "itkImageIOBase.h"

namespace volccl::cli {

class Nifti2ImageIO : public itk::ImageIOBase {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(Nifti2ImageIO);
  using Self = Nifti2ImageIO;
  using Superclass = itk::ImageIOBase;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);
  itkTypeMacro(Nifti2ImageIO, ImageIOBase);

  // A .nii or .nii.gz file whose header is NIfTI-2, in either byte order.
  bool CanReadFile(const char* file_name) override;
  // Reads the header: sides, voxel type, spacing, origin and direction (from the sform when
  // its code is set, else the qform, else the voxel sizes alone, as nibabel chooses).
  void ReadImageInformation() override;
  // Reads every voxel (no streaming), swapping bytes for a file of the other byte order and
  // applying scl_slope and scl_inter when they scale (the voxels are then read as doubles).
  void Read(void* buffer) override;

  // A name ending in .nii or .nii.gz; .nii.gz is gzip-compressed.
  bool CanWriteFile(const char* file_name) override;
  void WriteImageInformation() override {}
  // Writes the header (sform and qform, both "scanner anatomical") and the voxels.
  void Write(const void* buffer) override;

  bool SupportsDimension(unsigned long dimension) override {
    return dimension >= 1 && dimension <= 7;
  }

 protected:
  Nifti2ImageIO();
  ~Nifti2ImageIO() override = default;

 private:
  bool swapped_ = false;          // the file's byte order is not this machine's
  std::int64_t data_offset_ = 0;  // vox_offset
  double slope_ = 1;              // applied when scaled_
  double intercept_ = 0;
  bool scaled_ = false;
  itk::IOComponentEnum stored_type_ = itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE;
};

// Whether `path` names a NIfTI file (.nii or .nii.gz, any case).
bool IsNiftiName(const std::filesystem::path& path);

// Whether a NIfTI-1 header can hold an image of these sides (each at most 32767).
bool NiftiOneHolds(const std::uint64_t* sides, unsigned dimension);

}  // namespace volccl::cli
