// The other half: the same name, a different type (as two `Compress` step functors of one
// namespace once were).
namespace volccl::planted {
struct Step {
  int scale;
  int offset;
  int operator()(int value) const { return value * scale + offset; }
};
}  // namespace volccl::planted

int planted_b(int value) { return volccl::planted::Step{2, 1}(value); }
