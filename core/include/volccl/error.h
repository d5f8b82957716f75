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

// The components outnumber the labels of the type they were to be written in (32-bit labels
// and more than 2^32 - 1 components); component_count() says how many there are, so a caller
// can label again into 64-bit labels.
class TooManyComponents : public InvalidArgument {
 public:
  TooManyComponents(const std::string& what, std::uint64_t component_count)
      : InvalidArgument(what), component_count_(component_count) {}
  std::uint64_t component_count() const { return component_count_; }

 private:
  std::uint64_t component_count_;
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
