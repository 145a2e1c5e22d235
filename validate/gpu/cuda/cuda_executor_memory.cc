// Memory across streams: frees held until the streams that used the memory are past it (PyTorch's
// record_stream), and reuse of a freed range ordered after its last owner's stream.
#include "validate/gpu/cuda/internal/executor.h"

namespace dlsim::cuda::cuda_internal {

cudaEvent_t Executor::record_free_event(int stream) {
  cudaEvent_t e = free_events_.take();
  DLSIM_CK(cudaEventRecord(e, streams_[static_cast<size_t>(stream)]), "free event on stream " + std::to_string(stream));
  return e;
}

bool Executor::held_free_done(const HeldFree& h) {
  for (size_t i = 1; i < h.marks.size(); ++i) {
    const cudaError_t q = cudaEventQuery(h.marks[i].event);
    if (q == cudaErrorNotReady) return false;
    DLSIM_CK(q, "querying a held free's event");
  }
  return true;
}

// PyTorch's process_events at every allocation (nothing while a capture is under way: captured events cannot be
// queried; the memory then returns after the capture).
void Executor::release_held(bool wait) {
  if (capturing_) return;
  size_t kept = 0;
  for (size_t i = 0; i < held_.size(); ++i) {
    HeldFree& h = held_[i];
    if (wait)
      for (const FreeMark& m : h.marks) DLSIM_CK(cudaEventSynchronize(m.event), "waiting for a held free's event");
    if (wait || held_free_done(h)) {
      pool_->deallocate(h.addr);
      freed_.add(h.addr, h.bytes, h.marks);
    } else if (kept++ != i) {
      held_[kept - 1] = std::move(h);  // never onto itself: that empties the waits
    }
  }
  held_.resize(kept);
}

void Executor::free_memory(TensorId t) {
  const auto ti = static_cast<size_t>(t);
  const DevPtr addr = *addr_[ti];
  if (!multi_stream_) {
    pool_->deallocate(addr);
    return;
  }
  HeldFree h{addr, g_.tensor(t).bytes, {{alloc_stream_[ti], record_free_event(alloc_stream_[ti])}}};
  for (int16_t u : used_on_[ti]) h.marks.push_back({u, record_free_event(u)});
  used_on_[ti].clear();
  if (h.marks.size() > 1 && pool_->holds_frees_for_other_streams()) {
    held_.push_back(std::move(h));
    return;
  }
  pool_->deallocate(addr);
  freed_.add(h.addr, h.bytes, h.marks);
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
