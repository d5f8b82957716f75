# Links two translation units that define one type differently, with the flags of the
# volccl_odr_check target, and fails unless the linker reports the ODR violation: the check that
# guards the library must be able to see one.
# Usage: cmake -DCXX=... -DSOURCE_DIR=... -DWORK_DIR=... -P expect_odr_error.cmake
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(
  COMMAND "${CXX}" -std=c++17 -O2 -fPIC -flto=auto -Werror=odr -shared
          "${SOURCE_DIR}/planted_a.cpp" "${SOURCE_DIR}/planted_b.cpp" -o "${WORK_DIR}/planted.so"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(status EQUAL 0)
  message(FATAL_ERROR "the planted ODR violation linked without an error:\n${output}")
endif()
string(FIND "${output}" "One Definition Rule" found)
if(found EQUAL -1)
  message(FATAL_ERROR "the link failed, but not for the ODR violation:\n${output}")
endif()
message(STATUS "the planted ODR violation was reported")
