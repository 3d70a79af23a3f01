#pragma once
// The longest document this build plans: one batch entry, a sequence as attention sees it. The loader
// refuses every length a scenario names above it (max_seq_len, a distribution's max, value and median, a
// lengths file's lines), a plan file's sequences above it are refused too, and a drawn length is capped
// at it (a Pareto tail reaches any length). docs/SCENARIOS.md, "Document lengths".
#include <cstdint>
#include <limits>

namespace zb {

// 2^30 = 1,073,741,824 tokens: a hundred times the longest context published training runs use (10M), and
// small enough that every quantity derived from one document of length L stays exact in std::int64_t with
// room to spare, and finite in double:
//   * causal pairs L(L+1)/2 < 2^59 and the full square L² = 2^60 (CostModel::attention_pairs, the coverage
//     count of plan::verify); int64 overflows past L ≈ 3.04e9, where L² exceeds 2^63;
//   * bytes rows × (hidden + 2·kv_hidden) × dtype < 2^30 · 3·2^20 · 4 < 2^55 (model.hidden ≤ 2^20);
//   * attention FLOPs 4·hidden·pairs ≤ 2^81 per pass: finite in double, relative error 2^−53;
//   * a length, a token offset or a chunk of one fits an int as well (2^30 < 2^31).
inline constexpr std::int64_t kMaxDocumentLength = std::int64_t{1} << 30;

static_assert(kMaxDocumentLength <= std::numeric_limits<std::int64_t>::max() / kMaxDocumentLength / 4,
              "L² must fit std::int64_t with a factor of 4 to spare");
static_assert(kMaxDocumentLength < std::numeric_limits<int>::max(), "a document length must fit an int");

}  // namespace zb
