#include "core/exec/reference/launcher.hpp"

namespace zb::reference {

bool mpi_built() {
#ifdef ZEPPELIN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

}  // namespace zb::reference
