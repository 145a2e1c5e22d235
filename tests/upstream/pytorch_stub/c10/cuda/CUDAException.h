#pragma once
// Stand-in for c10/cuda/CUDAException.h (upstream replay): a failed runtime or driver call throws.
#include <cuda_runtime_api.h>

#include "c10/util/Exception.h"

#define C10_CUDA_CHECK(expr)                                                      \
  do {                                                                            \
    const auto c10_stub_err = (expr);                                             \
    if (c10_stub_err != 0) throw ::c10::Error(::c10::detail::str(#expr " failed: ", \
                                                                 static_cast<int>(c10_stub_err))); \
  } while (0)
#define C10_CUDA_DRIVER_CHECK(expr) C10_CUDA_CHECK(expr)
#define C10_CUDA_ERROR_HANDLED(expr) (expr)
