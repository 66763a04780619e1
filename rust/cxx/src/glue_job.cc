// glue_job.cc: the members of fluss_writer::Job in the Rust static library, which needs them
// when it hands a Job to an application's CallbackExecutor. An object file of their own: a
// shared build (FLUSS_WRITER_BUILD_SHARED) has its own exported copy (cpp/src/job.cpp), so the
// linker never takes this one there; see fluss_writer_job.inc.
#include <utility>

#include "fluss_writer_glue.h"
#include "fluss-writer-cxx/src/bridge.rs.h"

namespace fluss_writer {

#include "fluss_writer_job.inc"

}  // namespace fluss_writer
