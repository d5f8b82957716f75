// PLACEHOLDER until the buf_bke 2D labeler lands: replaced by its implementation.
#include "backends.h"
#include "volccl/error.h"

namespace volccl::detail {

LabelResult label_buf_bke_2d_cpu(const std::uint8_t*, Extent3, std::uint32_t*, const LabelOptions&) {
  throw InvalidArgument("volccl: buf_bke 2D is not built yet");
}

}  // namespace volccl::detail
