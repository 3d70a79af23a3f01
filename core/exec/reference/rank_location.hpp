#pragma once
// The Location of a problem that belongs to one rank (no file, no JSON path): every executor error
// names the rank it happened on.
#include "core/common/error.hpp"

namespace zb::reference {

[[nodiscard]] inline Location rank_location(int rank) {
  Location where;
  where.rank = rank;
  return where;
}

}  // namespace zb::reference
