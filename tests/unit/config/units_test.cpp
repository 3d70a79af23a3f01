#include "core/config/units.hpp"

#include <gtest/gtest.h>

#include "core/common/error.hpp"

namespace zb {
namespace {

TEST(Units, BandwidthUsesDecimalBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("450 GB/s"), 450e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gbit/s"), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200 Gbit/s"), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("64 MB/s"), 64e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.5 TB/s"), 1.5e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("  450GB/s "), 450e9);  // spaces are optional around the unit
}

TEST(Units, Latency) {
  EXPECT_DOUBLE_EQ(parse_latency("2 us"), 2e-6);
  EXPECT_DOUBLE_EQ(parse_latency("5 ns"), 5e-9);
  EXPECT_DOUBLE_EQ(parse_latency("1 ms"), 1e-3);
  EXPECT_DOUBLE_EQ(parse_latency("0.5 s"), 0.5);
  EXPECT_DOUBLE_EQ(parse_latency("3 \u00b5s"), 3e-6);
  EXPECT_DOUBLE_EQ(parse_latency("0 us"), 0.0);
}

TEST(Units, MemoryBinaryAndDecimal) {
  EXPECT_DOUBLE_EQ(parse_memory("141 GiB"), 141.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_memory("80 GB"), 80e9);
  EXPECT_DOUBLE_EQ(parse_memory("512 MiB"), 512.0 * 1048576.0);
}

TEST(Units, Compute) {
  EXPECT_DOUBLE_EQ(parse_compute("989 TFLOP/s"), 989e12);
  EXPECT_DOUBLE_EQ(parse_compute("312 TFLOP/s"), 312e12);
  EXPECT_DOUBLE_EQ(parse_compute("500 GFLOP/s"), 500e9);
  EXPECT_DOUBLE_EQ(parse_compute("2 PFLOP/s"), 2e15);
}

TEST(Units, BareNumberShowsTheExpectedForm) {
  const QuantityParse parsed = parse_quantity("400", QuantityKind::bandwidth);
  EXPECT_FALSE(parsed.value);
  EXPECT_NE(parsed.error.find("has no unit"), std::string::npos);
  EXPECT_NE(parsed.error.find("expected a bandwidth such as \"400 Gbit/s\" or \"450 GB/s\""),
            std::string::npos);
}

TEST(Units, ErrorsExplainWhatIsWrong) {
  auto error_of = [](std::string_view text, QuantityKind kind) { return parse_quantity(text, kind).error; };
  EXPECT_NE(error_of("400 Gb/s", QuantityKind::bandwidth).find("\"Gbit/s\" for bits"), std::string::npos);
  EXPECT_NE(error_of("450 gb/s", QuantityKind::bandwidth).find("did you mean \"GB/s\""), std::string::npos);
  EXPECT_NE(error_of("141 GB", QuantityKind::bandwidth).find("is a memory unit"), std::string::npos);
  EXPECT_NE(error_of("-2 us", QuantityKind::latency).find("negative"), std::string::npos);
  EXPECT_NE(error_of("fast", QuantityKind::latency).find("does not start with a number"), std::string::npos);
  EXPECT_NE(error_of("inf GB/s", QuantityKind::bandwidth).find("finite"), std::string::npos);
  EXPECT_NE(error_of("1e999 GB/s", QuantityKind::bandwidth).find("out of range"), std::string::npos);
  EXPECT_NE(error_of("", QuantityKind::memory).find("empty"), std::string::npos);
  // finite numbers whose product with the unit is not (issue 17, item 7)
  EXPECT_NE(error_of("1e308 TiB", QuantityKind::memory).find("overflows to infinity"), std::string::npos);
  EXPECT_NE(error_of("1e308 TB/s", QuantityKind::bandwidth).find("overflows to infinity"), std::string::npos);
  EXPECT_NE(error_of("1e300 PFLOP/s", QuantityKind::compute).find("overflows to infinity"),
            std::string::npos);
  EXPECT_NE(error_of("989 TFLOPS", QuantityKind::compute).find("expected a compute rate"), std::string::npos);
}

TEST(Units, ThrowingShorthandsRaiseBadInput) {
  try {
    (void)parse_bandwidth("fast");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bandwidth(450e9), "450 GB/s");
  EXPECT_EQ(format_bandwidth(50e9), "50 GB/s");
  EXPECT_EQ(format_bandwidth(1.5e6), "1.5 MB/s");
  EXPECT_EQ(format_bitrate(50e9), "400 Gbit/s");
  EXPECT_EQ(format_bytes(141.0 * 1073741824.0), "141 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_seconds(2e-6), "2 us");
  EXPECT_EQ(format_seconds(1.5e-3), "1.5 ms");
  EXPECT_EQ(format_seconds(5e-9), "5 ns");
  EXPECT_EQ(format_seconds(3.25), "3.25 s");
  EXPECT_EQ(format_seconds(0), "0 s");
  EXPECT_EQ(format_flops(989e12), "989 TFLOP/s");
}

TEST(Units, FormattingRoundTrips) {
  for (const char* text : {"450 GB/s", "64 GB/s", "2 us", "141 GiB", "989 TFLOP/s"}) {
    SCOPED_TRACE(text);
    const QuantityKind kind =
        std::string_view(text).find("FLOP") != std::string_view::npos ? QuantityKind::compute
        : std::string_view(text).find("/s") != std::string_view::npos ? QuantityKind::bandwidth
        : std::string_view(text).find("iB") != std::string_view::npos ? QuantityKind::memory
                                                                      : QuantityKind::latency;
    const double value = *parse_quantity(text, kind).value;
    const std::string shown = kind == QuantityKind::compute     ? format_flops(value)
                              : kind == QuantityKind::bandwidth ? format_bandwidth(value)
                              : kind == QuantityKind::memory    ? format_bytes(value)
                                                                : format_seconds(value);
    EXPECT_EQ(shown, text);
  }
}

}  // namespace
}  // namespace zb
