// Exceptions thrown by volccl. Every message says what failed and with which sizes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace volccl {

// Base of every volccl exception.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed something volccl cannot work with (bad extent, connectivity, name, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call or kernel launch failed.
class CudaError : public Error {
 public:
  using Error::Error;
};

// The GPU had too little free memory; bytes_needed() says how much the step asked for.
class OutOfDeviceMemory : public CudaError {
 public:
  OutOfDeviceMemory(const std::string& what, std::uint64_t bytes_needed)
      : CudaError(what), bytes_needed_(bytes_needed) {}
  std::uint64_t bytes_needed() const { return bytes_needed_; }

 private:
  std::uint64_t bytes_needed_;
};

// The CUDA backend was asked for but this build or machine has no usable CUDA device.
class NoCudaDevice : public Error {
 public:
  using Error::Error;
};

}  // namespace volccl
