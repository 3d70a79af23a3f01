#include "core/exec/reference/qkv_generator.hpp"

#include <stdexcept>

#include "core/common/rng.hpp"

namespace zb::reference {
namespace {

// Folds one more coordinate in; the golden-ratio increment keeps (a, b) and (b, a) apart.
std::uint64_t absorb(std::uint64_t state, std::uint64_t coordinate) {
  return mix64(state + 0x9E3779B97F4A7C15ULL + coordinate);
}

}  // namespace

double QkvGenerator::value(QkvTensor tensor, int seq, std::int64_t position, int head, int dim) const {
  std::uint64_t h = mix64(seed_ ^ 0x5A5E9E1D0C0FFEE1ULL);
  h = absorb(h, static_cast<std::uint64_t>(tensor));
  h = absorb(h, static_cast<std::uint64_t>(seq));
  h = absorb(h, static_cast<std::uint64_t>(position));
  h = absorb(h, static_cast<std::uint64_t>(head));
  h = absorb(h, static_cast<std::uint64_t>(dim));
  // 24 bits → k / 2^23 − 1 in [-1, 1): exact in float and in double. Q is scaled by 4 (exact too) so
  // that logits spread over a few units and the softmax is far from uniform: a missing key then shows.
  const auto bits = static_cast<std::int64_t>(h >> 40);
  const double uniform = static_cast<double>(bits) * 0x1.0p-23 - 1.0;
  return tensor == QkvTensor::q ? 4.0 * uniform : uniform;
}

template <typename T>
void QkvGenerator::fill_rows(QkvTensor tensor, int seq, std::int64_t begin, std::int64_t end,
                             std::span<T> out) const {
  const int heads = tensor == QkvTensor::q || tensor == QkvTensor::d_o ? dims_.heads : dims_.kv_heads;
  const auto width = static_cast<std::size_t>(heads * dims_.head_dim);
  if (end < begin || out.size() != static_cast<std::size_t>(end - begin) * width)
    throw std::logic_error("QkvGenerator::fill: output size does not match the rows");
  std::size_t i = 0;
  for (std::int64_t pos = begin; pos < end; ++pos)
    for (int head = 0; head < heads; ++head)
      for (int dim = 0; dim < dims_.head_dim; ++dim)
        out[i++] = static_cast<T>(value(tensor, seq, pos, head, dim));
}

void QkvGenerator::fill(QkvTensor tensor, int seq, std::int64_t begin, std::int64_t end,
                        std::span<float> out) const {
  fill_rows(tensor, seq, begin, end, out);
}

void QkvGenerator::fill(QkvTensor tensor, int seq, std::int64_t begin, std::int64_t end,
                        std::span<double> out) const {
  fill_rows(tensor, seq, begin, end, out);
}

}  // namespace zb::reference
