// Dispatch: one intercepted collective, packed in CallArgs, goes to the
// algorithm chosen for it, or to PMPI when the shim cannot handle it.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "algorithms/call_args.h"
#include "algorithms/node_map.h"
#include "algorithms/schedule.h"
#include "predictor/predictor.h"

namespace papshim {

int call_native(const CallArgs& a);
// Never throws: nothing leaves through the C interface.
int dispatch(const CallArgs& a) noexcept;

}  // namespace papshim
