#include "core/exec/cuda/cupti_buffer.hpp"

#include <cupti.h>

namespace zb::cuda {
namespace {

// Every record kind read here names its timing and placement fields alike.
template <typename Activity>
CuptiRecord timed_record(const Activity& activity, DeviceActivityKind kind) {
  return CuptiRecord{.kind = kind,
                     .name = {},
                     .start_ns = activity.start,
                     .end_ns = activity.end,
                     .device = activity.deviceId,
                     .stream = activity.streamId,
                     .correlation = activity.correlationId,
                     .bytes = 0,
                     .copy_kind = {}};
}

CuptiRecord kernel_record(const CUpti_ActivityKernel10& k) {
  CuptiRecord r = timed_record(k, DeviceActivityKind::kernel);
  r.name = readable_kernel_name(k.name);
  if (is_nccl_kernel(r.name)) r.kind = DeviceActivityKind::nccl_kernel;
  return r;
}

// MEMCPY and MEMCPY2 (peer) records share these fields under the same names.
template <typename Copy>
CuptiRecord copy_record(const Copy& c) {
  CuptiRecord r = timed_record(c, DeviceActivityKind::memcpy);
  r.copy_kind = memcpy_kind_name(c.copyKind);
  r.name = "memcpy " + r.copy_kind;
  r.bytes = c.bytes;
  return r;
}

CuptiRecord memset_record(const CUpti_ActivityMemset4& m) {
  CuptiRecord r = timed_record(m, DeviceActivityKind::memset);
  r.name = "memset";
  r.bytes = m.bytes;
  return r;
}

}  // namespace

const char* memcpy_kind_name(std::uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

ParsedActivity parse_activity_buffer(std::uint8_t* buffer, std::size_t valid_bytes) {
  ParsedActivity parsed;
  if (buffer == nullptr || valid_bytes == 0) return parsed;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the end of the valid bytes
    if (status != CUPTI_SUCCESS) {
      const char* text = nullptr;
      cuptiGetResultString(status, &text);
      // CUPTI leaves `record` at the last record it read; the unreadable one follows it.
      parsed.stopped = std::string("cuptiActivityGetNextRecord: ") +
                       (text != nullptr ? text : "unknown error") + " after " +
                       std::to_string(parsed.records.size() + static_cast<std::size_t>(parsed.other_kinds)) +
                       " records of a " + std::to_string(valid_bytes) + "-byte buffer";
      break;
    }
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        parsed.records.push_back(kernel_record(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        parsed.records.push_back(copy_record(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        parsed.records.push_back(copy_record(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        parsed.records.push_back(memset_record(*reinterpret_cast<const CUpti_ActivityMemset4*>(record)));
        break;
      default:
        ++parsed.other_kinds;
        break;
    }
  }
  return parsed;
}

}  // namespace zb::cuda
