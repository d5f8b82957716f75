// PLACEHOLDER until the ha4 2D labeler lands: replaced by its implementation.
#include "cuda_backends.h"
#include "volccl/error.h"

namespace volccl::detail {

LabelResult label_ha4_2d_cuda(const std::uint8_t*, Extent3, std::uint32_t*, const LabelOptions&,
                                 void*) {
  throw InvalidArgument("volccl: ha4 2D is not built yet");
}

}  // namespace volccl::detail
