#include "core/config/scenario.hpp"

namespace zb {

const char* to_string(Backend b) {
  switch (b) {
    case Backend::sim:
      return "sim";
    case Backend::reference:
      return "reference";
    case Backend::cuda:
      return "cuda";
  }
  return "?";
}

const char* to_string(Passes p) {
  return p == Passes::fwd ? "fwd" : "fwd+bwd";
}

const char* to_string(LongDocuments d) {
  switch (d) {
    case LongDocuments::truncate:
      return "truncate";
    case LongDocuments::split:
      return "split";
    case LongDocuments::keep:
      return "keep";
  }
  return "?";
}

}  // namespace zb
