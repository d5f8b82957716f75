// PLACEHOLDER until the ha4 2D labeler lands: replaced by its implementation.
#include "backends.h"
#include "volccl/error.h"

namespace volccl::detail {

LabelResult label_ha4_2d_cpu(const std::uint8_t*, Extent3, std::uint32_t*, const LabelOptions&) {
  throw InvalidArgument("volccl: ha4 2D is not built yet");
}

}  // namespace volccl::detail
