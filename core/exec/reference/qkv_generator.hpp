#pragma once
// Deterministic Q, K, V and the output gradient dO: every element is a counter-based hash of (seed,
// tensor, sequence, position, head, dim) mapped to [-1, 1) (Q: [-4, 4)), so any rank can materialise any
// rows without a global tensor and without drawing the elements before them. dO stands in for the
// gradient the layers above would send back: the backward pass starts from it. Values have 24 significant
// bits, so the float and the double copy of an element are the same number: the float64 reference sees
// exactly the inputs the float32 run saw.
#include <cstdint>
#include <span>

namespace zb::reference {

enum class QkvTensor : std::uint8_t { q = 1, k = 2, v = 3, d_o = 4 };  // d_o: rows of width heads · head_dim

struct AttentionDims {
  int heads = 2;
  int kv_heads = 2;
  int head_dim = 16;
  [[nodiscard]] int q_width() const { return heads * head_dim; }      // floats per Q (and O) row
  [[nodiscard]] int kv_width() const { return kv_heads * head_dim; }  // floats per K row and per V row
};

class QkvGenerator {
 public:
  QkvGenerator(std::uint64_t seed, AttentionDims dims) : seed_(seed), dims_(dims) {}

  [[nodiscard]] double value(QkvTensor tensor, int seq, std::int64_t position, int head, int dim) const;

  // Rows [begin, end) of one tensor of one sequence, row-major (position, head, dim); `out` holds
  // (end − begin) · width floats, width = q_width() for Q and dO, kv_width() for K and V.
  void fill(QkvTensor tensor, int seq, std::int64_t begin, std::int64_t end, std::span<float> out) const;
  void fill(QkvTensor tensor, int seq, std::int64_t begin, std::int64_t end, std::span<double> out) const;

  [[nodiscard]] const AttentionDims& dims() const { return dims_; }

 private:
  template <typename T>
  void fill_rows(QkvTensor tensor, int seq, std::int64_t begin, std::int64_t end, std::span<T> out) const;

  std::uint64_t seed_;
  AttentionDims dims_;
};

}  // namespace zb::reference
