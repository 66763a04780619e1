// fluss_writer_test_hooks.hpp: hooks of fluss-writer's own C++ tests (tests-cpp) and benchmark
// (bench/cpp). Not part of the API and not installed: only a build with the CMake option
// FLUSS_WRITER_TEST_HOOKS (cargo feature `test-hooks` of rust/cxx; on by default when the tests or
// the benchmark are built) has them, and such a build refuses to install. The shipped packages
// (scripts/dist.sh cpp) are built without them; scripts/check-no-test-hooks.sh checks that.
#pragma once

#include <cstddef>
#include <vector>

#include "fluss_writer.hpp"

#ifndef FLUSS_WRITER_TEST_HOOKS
#error "fluss_writer_test_hooks.hpp needs a library built with the CMake option FLUSS_WRITER_TEST_HOOKS"
#endif

namespace fluss_writer {
namespace testing {

// Test hook: the next bridge call (from any thread) panics inside the library's panic guard, as
// a bug in the Rust code would. Every entry point turns such a panic into a Result with
// ClientCode::Internal (or, for calls that return no Result, a neutral value and a line on
// stderr); the process stays alive.
void ForcePanicInNextCall();

// Benchmark hook: runs the callables through the dispatcher as the core does (a slot each, one
// job per `per_job` callables, one FIFO worker) and returns the seconds until every one ran, was
// destroyed and released its slot. The completion each callable sees has table "bench.t".
double RunThroughDispatcher(std::vector<WriteCallback> callbacks, size_t per_job);

}  // namespace testing
}  // namespace fluss_writer
