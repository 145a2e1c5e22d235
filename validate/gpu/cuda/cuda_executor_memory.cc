// Memory across streams: frees held until the streams that used the memory are past it (PyTorch's
// record_stream), and reuse of a freed range ordered after its last owner's stream.
#include "validate/gpu/cuda/internal/executor.h"

namespace dlsim::cuda::cuda_internal {

cudaEvent_t Executor::record_free_event(int stream) {
  cudaEvent_t e = free_events_.take();
  DLSIM_CK(cudaEventRecord(e, streams_[static_cast<size_t>(stream)]), "free event on stream " + std::to_string(stream));
  return e;
}

// PyTorch's process_events at every allocation, or its synchronize_and_free_events (wait); nothing while a capture
// is under way (held_frees.h says why).
void Executor::release_held(bool wait) {
  auto release = [&](const HeldFrees<FreeMark>::Hold& h) {
    pool_->deallocate(h.addr);
    freed_.add(h.addr, h.bytes, h.marks);
  };
  if (wait) {
    held_.release_all(
        [](const FreeMark& m) { DLSIM_CK(cudaEventSynchronize(m.event), "waiting for a held free's event"); }, release);
    return;
  }
  held_.release_completed(
      [](const FreeMark& m) {
        const cudaError_t q = cudaEventQuery(m.event);
        if (q == cudaErrorNotReady) return false;
        DLSIM_CK(q, "querying a held free's event");
        return true;
      },
      release);
}

void Executor::free_memory(TensorId t) {
  const auto ti = static_cast<size_t>(t);
  const DevPtr addr = *addr_[ti];
  if (!multi_stream_) {
    pool_->deallocate(addr);
    return;
  }
  const uint64_t bytes = g_.tensor(t).bytes;
  std::vector<FreeMark> marks{{alloc_stream_[ti], record_free_event(alloc_stream_[ti])}};
  for (int16_t u : used_on_[ti]) marks.push_back({u, record_free_event(u)});
  used_on_[ti].clear();
  if (marks.size() > 1 && pool_->holds_frees_for_other_streams()) {
    held_.hold(addr, bytes, std::move(marks));
    return;
  }
  pool_->deallocate(addr);
  freed_.add(addr, bytes, marks);
}

void Executor::order_after_freed(DevPtr addr, uint64_t bytes, int stream) {
  freed_.take(addr, bytes, [&](const std::vector<FreeMark>& marks) {
    for (const FreeMark& m : marks)
      if (m.stream != stream)
        DLSIM_CK(cudaStreamWaitEvent(streams_[static_cast<size_t>(stream)], m.event, 0), "ordering a reuse after a free");
  });
}

void Executor::device_synchronized() {
  release_held(true);
  freed_.clear();
  free_events_.all_done();
}

}  // namespace dlsim::cuda::cuda_internal
