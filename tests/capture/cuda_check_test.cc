#include <doctest/doctest.h>

#include "capture/cuda_check.h"

using graphscope::Error;
using graphscope::ExitCode;

namespace {
cudaError_t fails_with_invalid_value() { return cudaErrorInvalidValue; }
CUptiResult cupti_not_initialized() { return CUPTI_ERROR_NOT_INITIALIZED; }
}  // namespace

TEST_CASE("a failed CUDA call becomes a device error naming the call and the error") {
  try {
    GS_CUDA(fails_with_invalid_value());
    FAIL("no throw");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::device);
    std::string m = e.what();
    CHECK(m.find("fails_with_invalid_value() (cudaErrorInvalidValue: invalid argument, at cuda_check_test.cc:") == 0);
  }
}

TEST_CASE("a failed CUPTI call becomes a device error with CUPTI's text") {
  try {
    GS_CUPTI(cupti_not_initialized());
    FAIL("no throw");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::device);
    CHECK(std::string(e.what()).find("cupti_not_initialized() (CUPTI_ERROR_NOT_INITIALIZED") == 0);
  }
}

TEST_CASE("successful calls do not throw") {
  CHECK_NOTHROW(GS_CUDA(cudaSuccess));
  CHECK_NOTHROW(GS_CU(CUDA_SUCCESS));
  CHECK_NOTHROW(GS_CUPTI(CUPTI_SUCCESS));
}

TEST_CASE("a failed driver call is reported even when no driver is loaded") {
  try {
    GS_CU(CUDA_ERROR_NO_DEVICE);
    FAIL("no throw");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::device);
    // With a driver loaded its name is used; without one, the number.
    std::string m = e.what();
    CHECK((m.find("CUDA_ERROR_NO_DEVICE (CUDA_ERROR_NO_DEVICE") == 0 || m.find("CUDA_ERROR_NO_DEVICE (CUresult 100") == 0));
  }
}
