// version.cpp: fluss_writer::Version(), the version this library was built as.
#include "fluss_writer.hpp"

namespace fluss_writer {

const char* Version() noexcept { return FLUSS_WRITER_VERSION_STRING; }

}  // namespace fluss_writer
