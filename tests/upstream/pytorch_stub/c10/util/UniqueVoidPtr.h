#pragma once
// Stand-in for c10/util/UniqueVoidPtr.h (upstream replay): DataPtr lives in the CUDACachingAllocator.h stub.
