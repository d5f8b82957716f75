# Driven by tests/package/CMakeLists.txt (cmake -D... -P run_package_test.cmake):
# 1. cmake --install the build tree into WORK_DIR/prefix,
# 2. configure WORK_DIR/consumer-build from the consumer project with CMAKE_PREFIX_PATH set to
#    that prefix only (no package registry, no build tree), same generator and C++ compiler,
# 3. build it and run the consumer (with VOLCCL_CONSUMER_ARGS, a ;-list, when given; when
#    VOLCCL_CONSUMER_OUTPUT is set, the run must have written that file).
# VOLCCL_CONSUMER_DEFINES (a ;-list of NAME=VALUE) go to the consumer's configuration.
cmake_minimum_required(VERSION 3.24)

foreach(var VOLCCL_BUILD_DIR VOLCCL_CONSUMER_SOURCE_DIR VOLCCL_WORK_DIR VOLCCL_GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_package_test.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT VOLCCL_CONFIG)
  set(VOLCCL_CONFIG Release)
endif()

set(prefix ${VOLCCL_WORK_DIR}/prefix)
set(consumer_build ${VOLCCL_WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${VOLCCL_WORK_DIR})
file(MAKE_DIRECTORY ${VOLCCL_WORK_DIR})

function(run_step name)
  list(JOIN ARGN " " command_line)
  message(STATUS "package test: ${name}: ${command_line}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "package test: ${name} failed (${result})")
  endif()
endfunction()

run_step(install ${CMAKE_COMMAND} --install ${VOLCCL_BUILD_DIR} --prefix ${prefix}
         --config ${VOLCCL_CONFIG})

foreach(file include/volccl/volccl.h include/volccl/types.h include/volccl/error.h)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "package test: ${file} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/volcclConfig.cmake)
if(NOT config_files)
  message(FATAL_ERROR "package test: no volcclConfig.cmake under ${prefix}")
endif()

set(configure_args
  -S ${VOLCCL_CONSUMER_SOURCE_DIR} -B ${consumer_build} -G ${VOLCCL_GENERATOR}
  -DCMAKE_BUILD_TYPE=${VOLCCL_CONFIG}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DVOLCCL_EXPECTED_PREFIX=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(VOLCCL_MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${VOLCCL_MAKE_PROGRAM})
endif()
if(VOLCCL_CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${VOLCCL_CXX_COMPILER})
endif()
if(VOLCCL_CUDA_ROOT)
  list(APPEND configure_args -DCUDAToolkit_ROOT=${VOLCCL_CUDA_ROOT})
endif()
foreach(define IN LISTS VOLCCL_CONSUMER_DEFINES)
  list(APPEND configure_args -D${define})
endforeach()

run_step(configure ${CMAKE_COMMAND} ${configure_args})
run_step(build ${CMAKE_COMMAND} --build ${consumer_build} --config ${VOLCCL_CONFIG})

find_program(consumer_program consumer PATHS ${consumer_build} ${consumer_build}/${VOLCCL_CONFIG}
             NO_DEFAULT_PATH REQUIRED)
run_step(run ${consumer_program} ${VOLCCL_CONSUMER_ARGS})
if(VOLCCL_CONSUMER_OUTPUT AND NOT EXISTS ${VOLCCL_CONSUMER_OUTPUT})
  message(FATAL_ERROR "package test: the consumer did not write ${VOLCCL_CONSUMER_OUTPUT}")
endif()
message(STATUS "package test: passed")
