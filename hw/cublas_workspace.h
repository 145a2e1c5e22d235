#pragma once
// The workspaces PyTorch gives cuBLAS, which a training graph (the zoo's, or a step recorded on fake tensors)
// does not show: they are taken from the caching allocator by ATen's handle pool, not by any op.
//
// How PyTorch 2.x does it (aten/src/ATen/cuda/CublasHandlePool.cpp): each host thread reserves its own cuBLAS
// handle per device, and every cuBLAS call first looks up the workspace of its (handle, current stream) pair; the
// first call of a pair allocates one through the caching allocator, and the map holding it is never cleared in a
// training step, so it stays allocated to the end of the process. Its size is parsed from CUBLAS_WORKSPACE_CONFIG
// (":SIZE_KIB:COUNT" terms summed), by default 32 MiB on sm90 (Hopper) and 8 MiB + 128 KiB elsewhere. A matrix
// product through cuBLASLt (the bias-fused addmm among others) also takes a cuBLASLt workspace per (handle,
// stream), CUBLASLT_WORKSPACE_SIZE KiB, by default 1 MiB, allocated and held the same way; PyTorch 2.11 keeps it
// separate unless TORCH_CUBLASLT_UNIFIED_WORKSPACE=1 (later releases make sharing the cuBLAS one the default).
// A training step runs matrix products on two host threads: the forward and the optimizer on Python's, the
// backward on autograd's device thread. An H200's memory snapshots (results/fidelity/memory.md) show exactly
// that: two 32 MiB blocks (setWorkspaceForHandle) and two 1 MiB blocks (getCUDABlasLtWorkspace) live at every
// peak.
//
// dlsim adds them as persistent tensors, held to the end. The lowering allocates them with the weights before the
// first iteration; PyTorch allocates them at the thread's first matrix product of the first iteration instead,
// when the allocator may carve them from a cached free block rather than open a segment, which a run with
// Program::first_iteration does (experiment/first_step.h). One pair per thread, not per stream: a concurrency schedule that runs
// matrix products on several streams of one thread would take one pair per stream in PyTorch.
#include <cstdint>
#include <vector>

#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// What add_cublas_workspaces added: per host thread that runs a matrix product, one tensor per workspace kind
// the hardware file sizes (its cublas_workspace_kib, cublaslt_workspace_kib; a 0 adds none).
struct CublasWorkspaces {
  int threads = 0;      // host threads with a matrix product: Python's (forward, optimizer), autograd's (backward)
  int tensors = 0;      // workspace tensors added
  uint64_t bytes = 0;   // their bytes
  // Per such thread, Python's first: its workspace tensors and its matrix products (the first of which is where
  // PyTorch allocates them; experiment/first_step.h).
  struct Thread {
    std::vector<TensorId> workspaces;
    std::vector<OpId> matmuls;
  };
  std::vector<Thread> per_thread;
};

// Whether an op is a matrix product through cuBLAS (Linear, MatMul and their backward ops).
bool runs_cublas(const Op& op);

// Adds the persistent workspace tensors (kind Workspace) for each host thread whose ops include a matrix product:
// the cuBLAS one first, then the cuBLASLt one, Python's thread before autograd's, as the first step allocates
// them. No-op when the spec sizes neither.
CublasWorkspaces add_cublas_workspaces(Graph& g, const GpuSpec& spec);

}  // namespace dlsim
