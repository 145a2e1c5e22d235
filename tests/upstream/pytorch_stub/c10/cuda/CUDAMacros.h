#pragma once
// Stand-in for c10/cuda/CUDAMacros.h (upstream replay): one static build, nothing to export.
#define C10_CUDA_API
#define C10_LIKELY(x) (x)
#define C10_UNLIKELY(x) (x)
