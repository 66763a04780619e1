// job.cpp: fluss_writer::Job's members in the shared library (FLUSS_WRITER_BUILD_SHARED only);
// rust/cxx/include/fluss_writer_job.inc says why.
#include <utility>

#include "internal.h"

namespace fluss_writer {

#include "fluss_writer_job.inc"

}  // namespace fluss_writer
