// Checks of input files that ITK's readers trust too much: libpng aborts the program on a damaged
// PNG header, MetaIO and the NIfTI and NRRD readers label what a damaged compressed stream left,
// and the NIfTI reader reads a side of 0 as 1. Each check reads the file itself and throws
// CommandError naming `named` ("INPUT 'x'", "INPUT 'dir' (its slice 'x')") when it is damaged.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "command_support.h"

namespace volccl::cli {

// What can be checked from the header alone, before ITK opens the file: a PNG's structure (its
// signature, IHDR, every chunk's length and CRC, and that its image data inflate to exactly the
// bytes its size takes) and a NIfTI header's dimensions.
void CheckBeforeReading(const fs::path& file, const std::string& named);

// The voxels after ITK has read the header: `data_bytes` (the header's size times the voxel's
// bytes) must be there, in full, in every compressed stream of a NIfTI, MetaImage or NRRD file
// (length and checksum checked), and in a plain file; `format` is ITK's ImageIO class name.
void CheckVoxelData(const fs::path& file, const std::string& named, const std::string& format,
                    std::uint64_t data_bytes);

// While alive, whatever the libraries underneath print on stderr (ITK's warnings, niftilib's and
// libpng's messages) goes to a temporary file instead, so that a failure prints volccl's one
// error line and nothing else.
class LibraryMessages {
 public:
  LibraryMessages();
  LibraryMessages(const LibraryMessages&) = delete;
  LibraryMessages& operator=(const LibraryMessages&) = delete;
  ~LibraryMessages();

 private:
  int saved_stderr_ = -1;
  std::FILE* sink_ = nullptr;
};

}  // namespace volccl::cli
