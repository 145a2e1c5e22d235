#pragma once
// What the PyTorch stubs (pytorch_stub.cc) count beyond the shared cuda_stub's calls.
#include <cstdint>

namespace dlsim::upstream {

struct PytorchStubCalls {
  uint64_t mem_creates = 0;   // cuMemCreate (expandable segments' physical pages)
  uint64_t mem_releases = 0;  // cuMemRelease
  uint64_t device_syncs = 0;  // cudaDeviceSynchronize
};
const PytorchStubCalls& pytorch_stub_calls();
void reset_pytorch_stub();  // zero the counts and forget every driver handle (a new replay)

}  // namespace dlsim::upstream
