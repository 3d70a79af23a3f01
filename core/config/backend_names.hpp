#pragma once
// The names a scenario's "backend" may take: the registered backends'. The backends live in core/exec,
// above config, so (as the strategy files fill the system catalog) each backend's registration
// (core/exec/backend_registry.cpp) adds its name here during static initialisation, and the loader
// validates "backend" against this list. A binary that loads scenarios naming a backend links zb_backends
// (or registers stand-ins, as the scenario fuzz target does). Immutable from the first read on.
#include <string>
#include <vector>

namespace zb {

// Adds a backend's name in listing order (by `order`; equal orders in registration order). Only for static
// initialisation, by BackendRegistration; aborts on a duplicate name or once the list has been read.
void register_backend_name(const std::string& name, int order);

// Every registered backend's name, in listing order. Seals the list.
[[nodiscard]] const std::vector<std::string>& backend_names();

}  // namespace zb
