#include "hw/cublas_workspace.h"

#include <string>

namespace dlsim {

bool runs_cublas(const Op& op) {
  switch (op.kind) {
    case OpKind::Linear:
    case OpKind::MatMul:
    case OpKind::LinearBwdData:
    case OpKind::LinearBwdWeight:
    case OpKind::MatMulBwd: return true;
    default: return false;
  }
}

namespace {

// The host thread that issues an op: autograd runs the backward on its device thread; the forward and the
// optimizer step run on the caller's (Python's) thread.
enum class HostThread { Python, Autograd };
HostThread thread_of(const Op& op) { return op.phase == Phase::Backward ? HostThread::Autograd : HostThread::Python; }
const char* to_string(HostThread t) { return t == HostThread::Python ? "python thread" : "autograd thread"; }

}  // namespace

CublasWorkspaces add_cublas_workspaces(Graph& g, const GpuSpec& spec) {
  CublasWorkspaces out;
  if (spec.cublas_workspace_bytes == 0 && spec.cublaslt_workspace_bytes == 0) return out;
  std::vector<OpId> matmuls[2];
  for (const Op& op : g.ops())
    if (runs_cublas(op)) matmuls[static_cast<int>(thread_of(op))].push_back(op.id);
  for (HostThread th : {HostThread::Python, HostThread::Autograd}) {
    if (matmuls[static_cast<int>(th)].empty()) continue;
    ++out.threads;
    CublasWorkspaces::Thread& mine = out.per_thread.emplace_back();
    mine.matmuls = matmuls[static_cast<int>(th)];
    for (const auto& [what, bytes] : {std::pair<const char*, uint64_t>{"cublas", spec.cublas_workspace_bytes},
                                      std::pair<const char*, uint64_t>{"cublaslt", spec.cublaslt_workspace_bytes}}) {
      if (bytes == 0) continue;
      Tensor t;
      t.name = std::string(what) + " workspace (" + to_string(th) + ")";
      t.kind = TensorKind::Workspace;
      t.dtype = DType::U8;
      t.shape = {static_cast<int64_t>(bytes)};
      t.bytes = bytes;
      t.persistent = true;
      mine.workspaces.push_back(g.add_tensor(std::move(t)));
      ++out.tensors;
      out.bytes += bytes;
    }
  }
  return out;
}

}  // namespace dlsim
