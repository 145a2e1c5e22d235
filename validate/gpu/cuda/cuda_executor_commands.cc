// One section of the program file's commands on the GPU's streams: launches through the op runners, allocations
// and frees through the pool, copies, events, and their timing spans.
#include "validate/gpu/cuda/internal/executor.h"

namespace dlsim::cuda::cuda_internal {

bool Executor::execute(const std::vector<Command>& cmds, int iteration, bool record,
                       std::vector<std::pair<OpRecord, Span>>& ops, std::vector<std::pair<CopyRecord, Span>>& copies) {
  for (const Command& c : cmds) {
    cudaStream_t s = streams_[static_cast<size_t>(c.stream)];
    switch (c.kind) {
      case CmdKind::HostCompute:
        throw CudaError("host_compute of op '" + g_.op(c.op).name +
                        "': the harness has no CPU optimizer step yet (ZeRO-Offload plans run on the simulator only)");
      case CmdKind::Alloc: {
        const Tensor& t = g_.tensor(c.tensor);
        release_held(false);
        auto p = pool_->allocate({t.bytes, c.stream});
        if (!p && !held_.empty() && !capturing_) {  // PyTorch's synchronize_and_free_events, then once more
          release_held(true);
          p = pool_->allocate({t.bytes, c.stream});
        }
        if (!p) {
          trace_.oom = true;
          trace_.oom_where = "iteration " + std::to_string(iteration) + ", alloc of tensor '" + t.name + "' (" +
                             std::to_string(t.bytes) + " bytes)" + arena_note();
          return false;
        }
        if (multi_stream_) order_after_freed(*p, t.bytes, c.stream);
        addr_[static_cast<size_t>(t.id)] = *p;
        alloc_stream_[static_cast<size_t>(t.id)] = c.stream;
        used_on_[static_cast<size_t>(t.id)].clear();
        if (record)
          trace_.mem.push_back({iteration, host_ns(), MemAction::Alloc, t.id, *p, t.bytes, mem_->reserved()});
        // Weights, optimizer state and inputs start random (never zeros); activations are written by their ops.
        if (t.persistent || t.kind == TensorKind::Input) fill(t.id, s, 1000 + static_cast<uint64_t>(t.id));
        break;
      }
      case CmdKind::Free: {
        const Tensor& t = g_.tensor(c.tensor);
        auto& a = addr_[static_cast<size_t>(t.id)];
        if (!a) throw CudaError("free of tensor '" + t.name + "' that is not allocated");
        if (record) trace_.mem.push_back({iteration, host_ns(), MemAction::Free, t.id, *a, t.bytes, mem_->reserved()});
        free_memory(t.id);
        a.reset();
        break;
      }
      case CmdKind::RecordStream: {
        const auto ti = static_cast<size_t>(c.tensor);
        if (!addr_[ti]) throw CudaError("record_stream of tensor '" + g_.tensor(c.tensor).name + "' that is not allocated");
        auto& on = used_on_[ti];
        if (c.stream != alloc_stream_[ti] && std::find(on.begin(), on.end(), c.stream) == on.end()) on.push_back(c.stream);
        break;
      }
      case CmdKind::Launch: {
        OpRunner& r = *runners_[static_cast<size_t>(c.op)];
        const Op& op = g_.op(c.op);
        const std::string ctx = "op " + std::to_string(op.id) + " '" + op.name + "'";
        // A workspace the graph does not hold comes from the pool right before the op and goes right after.
        std::optional<DevPtr> own_ws;
        void* ws = nullptr;
        if (op.workspace != kNoTensor && rule_ == WorkspaceRule::Graph) {
          if (g_.tensor(op.workspace).bytes > 0) ws = dev(op.workspace, ctx);  // 0 bytes: never allocated
        }
        else if (r.workspace_bytes() > 0) {
          own_ws = pool_->allocate({r.workspace_bytes(), c.stream});
          if (!own_ws) {
            trace_.oom = true;
            trace_.oom_where = "iteration " + std::to_string(iteration) + ", workspace of " + ctx + arena_note();
            return false;
          }
          ws = arena_ + *own_ws;
        }
        const auto& sides = side_[static_cast<size_t>(op.id)];
        const OpTranslation& kp = r.translation();
        auto resolve = [&](size_t step, bool out, size_t slot) -> void* {
          const KernelArgs& args = kp.steps[step].args;
          const Arg& a = out ? args.out.at(slot) : args.in.at(slot);
          if (a.id == kNoTensor) return sides[step][out ? args.in.size() + slot : slot]->p;
          return dev(a.id, ctx);
        };
        Span sp{};
        if (record) {
          sp = {events_.make(true), events_.make(true)};
          this->record(sp.begin, s, ctx);
        }
        const auto h0 = std::chrono::steady_clock::now();
        r.launch(s, resolve, ws);
        if (iteration >= 0 && !capturing_)
          host_launch_ns_[static_cast<size_t>(op.id)] +=
              std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - h0).count();
        if (record) {
          this->record(sp.end, s, ctx);
          ops.push_back({OpRecord{iteration, op.id, c.stream, 0, 0}, sp});
        }
        if (own_ws) pool_->deallocate(*own_ws);
        break;
      }
      case CmdKind::CopyOut: case CmdKind::CopyIn: {
        const Tensor& t = g_.tensor(c.tensor);
        const bool out = c.kind == CmdKind::CopyOut;
        const std::string ctx = std::string(out ? "copy out" : "copy in") + " of tensor '" + t.name + "'";
        void* h = host_.at(t.id)->p;
        void* d = dev(t.id, ctx);
        Span sp{};
        if (record) {
          sp = {events_.make(true), events_.make(true)};
          this->record(sp.begin, s, ctx);
        }
        DLSIM_CK(cudaMemcpyAsync(out ? h : d, out ? d : h, t.bytes, out ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, s), ctx);
        if (record) {
          this->record(sp.end, s, ctx);
          copies.push_back({CopyRecord{iteration, t.id, out, t.bytes, 0, 0, c.stream}, sp});
        }
        break;
      }
      case CmdKind::RecordEvent:
        DLSIM_CK(cudaEventRecord(prog_events_[static_cast<size_t>(c.event)], s), "program event " + std::to_string(c.event));
        break;
      case CmdKind::WaitEvent:
        DLSIM_CK(cudaStreamWaitEvent(s, prog_events_[static_cast<size_t>(c.event)], 0), "program event " + std::to_string(c.event));
        break;
      case CmdKind::SyncEvent:
        DLSIM_CK(cudaEventSynchronize(prog_events_[static_cast<size_t>(c.event)]), "program event " + std::to_string(c.event));
        break;
    }
    if (check_) {
      const std::string what = "check after command " + std::to_string(static_cast<int>(c.kind)) + " (op " +
                               (c.op >= 0 ? std::to_string(c.op) + " '" + g_.op(c.op).name + "'" : std::string("-")) +
                               ", tensor " + (c.tensor >= 0 ? "'" + g_.tensor(c.tensor).name + "'" : std::string("-")) +
                               ", iteration " + std::to_string(iteration) + ")";
      DLSIM_CK(cudaStreamSynchronize(s), what);
      DLSIM_CK(cudaGetLastError(), what);
    }
  }
  return true;
}

}  // namespace dlsim::cuda::cuda_internal
