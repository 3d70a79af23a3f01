#pragma once
// Plain-text tables for the console: columns padded to their widest cell, counted in characters (UTF-8
// code points) so that "×" or "µs" do not shift the columns.
#include <cstdio>
#include <string>
#include <vector>

namespace zb::cli {

using TableRow = std::vector<std::string>;

// Prints `header` and `rows` with two spaces between columns; the last column is not padded.
void print_table(std::FILE* out, const TableRow& header, const std::vector<TableRow>& rows);

}  // namespace zb::cli
