#pragma once
// Stand-in for c10/util/static_tracepoint.h (upstream replay): no USDT probes.
#define TORCH_SDT_DEFINE_SEMAPHORE(name)
#define TORCH_SDT_IS_ENABLED(name) false
#define TORCH_SDT_WITH_SEMAPHORE(name, ...)
