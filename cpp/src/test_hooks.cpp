// test_hooks.cpp: the hooks of fluss_writer_test_hooks.hpp, compiled only with the CMake option
// FLUSS_WRITER_TEST_HOOKS (the Rust library then has the cargo feature `test-hooks`).
#include "fluss_writer_test_hooks.hpp"

#include "internal.h"

namespace fluss_writer {
namespace testing {

void ForcePanicInNextCall() { ffi::testing_force_panic(); }

double RunThroughDispatcher(std::vector<WriteCallback> callbacks, size_t per_job) {
  rust::Box<ffi::RBench> b = ffi::bench_new(per_job);
  for (WriteCallback& cb : callbacks) {
    ffi::bench_push(*b, internal::TakeCallback(cb));
  }
  callbacks.clear();
  return ffi::bench_run(*b);
}

}  // namespace testing
}  // namespace fluss_writer
