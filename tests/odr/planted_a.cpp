// One half of a planted One Definition Rule violation: odr.detects_violations expects the link of
// this file with planted_b.cpp to fail under -flto -Werror=odr.
namespace volccl::planted {
struct Step {
  int offset;
  int operator()(int value) const { return value + offset; }
};
}  // namespace volccl::planted

int planted_a(int value) { return volccl::planted::Step{1}(value); }
