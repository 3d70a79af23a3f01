#pragma once
// Internal to the scenario loader: the reader of "model.moe" (moe_section.cpp), called by read_model.
#include "core/config/json_reader.hpp"
#include "core/config/scenario.hpp"

namespace zb::sections {

// Reads "model.moe" over `spec` (the preset's MoE, or dense), recording every problem in the context.
void read_moe(const ObjectReader& model, MoeSpec& spec);

}  // namespace zb::sections
