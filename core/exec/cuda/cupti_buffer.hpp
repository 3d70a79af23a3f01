#pragma once
// Walks a buffer of CUPTI activity records, as CUPTI hands one over (the collector's buffer-completed
// callback, cupti_activity.hpp), into plain CuptiRecords (cupti_records.hpp).
//
// The walk is CUPTI's own, cuptiActivityGetNextRecord, not a reading of the record layouts by hand: CUPTI
// knows each kind's record size and version for this toolkit, and libcupti answers the call without a
// driver or a GPU (tried on a machine with neither; tests/unit/cuda_exec/cupti_buffer_test.cpp builds
// buffers of the toolkit's real record structs and walks them here). So the file needs the CUPTI headers
// and libcupti and is built only when CMake found them (ZEPPELIN_HAVE_CUPTI), in the library
// zb_exec_cuda_cupti; the records it yields, and everything downstream of them, are plain C++ built
// everywhere.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/cuda/cupti_records.hpp"

namespace zb::cuda {

struct ParsedActivity {
  std::vector<CuptiRecord> records;
  int other_kinds = 0;  // records of kinds the trace does not draw (contexts, overheads, ...): skipped
  std::string stopped;  // why the walk ended before the valid bytes did; empty when it reached their end
};

// The kernels (concurrent and serial kernel records; NCCL's by name), memory copies (MEMCPY, and MEMCPY2
// for peer copies) and memsets in the first `valid_bytes` of `buffer`, in buffer order. A record CUPTI
// cannot read (an unknown kind, a truncated record) ends the walk: the records before it are kept and
// `stopped` names CUPTI's error and how many records came before it.
[[nodiscard]] ParsedActivity parse_activity_buffer(std::uint8_t* buffer, std::size_t valid_bytes);

// CUPTI's short name of a memcpy kind (CUpti_ActivityMemcpyKind): "HtoD", "DtoD", "PtoP", ...
[[nodiscard]] const char* memcpy_kind_name(std::uint8_t copy_kind);

}  // namespace zb::cuda
