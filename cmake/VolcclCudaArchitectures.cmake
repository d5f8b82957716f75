# Picks CMAKE_CUDA_ARCHITECTURES when the user did not: the GPU of this machine when one
# answers nvidia-smi, otherwise the major architectures from 8.0 on that CUDA 12/13 supports,
# with PTX for the newest so that later GPUs can JIT it. CI passes one architecture on the
# command line. 8.0 is the floor: the statistics reduce across a warp with __reduce_*_sync.
if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
  return()
endif()
find_program(VOLCCL_NVIDIA_SMI nvidia-smi)
if(VOLCCL_NVIDIA_SMI)
  execute_process(COMMAND ${VOLCCL_NVIDIA_SMI} -L RESULT_VARIABLE smi_result
                  OUTPUT_QUIET ERROR_QUIET)
endif()
if(VOLCCL_NVIDIA_SMI AND smi_result EQUAL 0)
  set(CMAKE_CUDA_ARCHITECTURES native CACHE STRING "CUDA architectures")
else()
  set(CMAKE_CUDA_ARCHITECTURES "80-real;86-real;89-real;90-real;100-real;120"
      CACHE STRING "CUDA architectures")
endif()
message(STATUS "volccl: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")
