#pragma once
// Stand-in for c10/cuda/CUDAFunctions.h (upstream replay).
#include "c10/cuda/CUDACachingAllocator.h"
