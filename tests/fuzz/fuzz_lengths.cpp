// libFuzzer target: the bytes as a lengths file (one document length per line), read by the same
// line-by-line parser read_lengths_file uses after its size and file checks.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/workload/lengths_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  return zb::fuzz::accept_input_errors([&] {
    const auto lengths = zb::parse_lengths(in, "fuzz-lengths.txt");
    for (const std::int64_t length : lengths) {
      if (length < 1) {  // the reader promises positive lengths; the workload divides by them
        std::fprintf(stderr, "fuzz: parse_lengths returned length %lld\n", static_cast<long long>(length));
        std::abort();
      }
    }
  });
}
