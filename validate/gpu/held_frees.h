#pragma once
// Frees held for other streams, as PyTorch's caching allocator holds a block that record_stream named: the block
// returns to the pool only once every stream that used it is past the free. Each hold carries one mark per stream
// (an event recorded at the free on that stream); the executor says how to query and wait on a mark.
//
// Under CUDA-graph capture the marks are nodes of the graph, not work on a stream: they can neither be queried nor
// waited on (cudaEventSynchronize on one answers cudaErrorInvalidValue), and nothing they mark has run. So, as
// PyTorch defers the events of frees made during a capture until no capture is under way, a hold made during a
// capture is kept for the whole capture (new requests take fresh memory, which is why a captured multi-stream
// iteration reserves more) and ends, without any wait, when the capture ends: replays reuse the captured
// addresses and allocate nothing. The executor's CUDA code stays a thin caller of this class, which is tested
// without a GPU (held_frees_test.cc).
#include <cstdint>
#include <utility>
#include <vector>

namespace dlsim::cuda {

template <class Mark>
class HeldFrees {
 public:
  struct Hold {
    uint64_t addr = 0;
    uint64_t bytes = 0;
    std::vector<Mark> marks;  // the allocation stream's first
    bool captured = false;    // made during a capture: its marks are graph nodes
  };

  void hold(uint64_t addr, uint64_t bytes, std::vector<Mark> marks) {
    holds_.push_back({addr, bytes, std::move(marks), capturing_});
  }
  bool empty() const { return holds_.empty(); }
  size_t size() const { return holds_.size(); }
  bool capturing() const { return capturing_; }

  void capture_begin() { capturing_ = true; }
  // Ends every hold made during the capture, without waiting; release(hold) returns its memory.
  template <class Release>
  void capture_end(Release&& release) {
    capturing_ = false;
    keep_if([&](Hold& h) {
      if (!h.captured) return true;
      release(h);
      return false;
    });
  }

  // PyTorch's process_events at every allocation: ends the holds whose marks have all completed (done(mark)),
  // in the order they were made. Nothing while a capture is under way (no mark can be queried then).
  template <class Done, class Release>
  void release_completed(Done&& done, Release&& release) {
    if (capturing_) return;
    keep_if([&](Hold& h) {
      for (size_t i = 1; i < h.marks.size(); ++i)  // the allocation stream's own mark orders nothing here
        if (!done(h.marks[i])) return true;
      release(h);
      return false;
    });
  }

  // PyTorch's synchronize_and_free_events: waits on every mark (wait(mark)) and ends every hold. Not during a
  // capture; a hold left from a capture is ended without a wait.
  template <class Wait, class Release>
  void release_all(Wait&& wait, Release&& release) {
    if (capturing_) return;
    keep_if([&](Hold& h) {
      if (!h.captured)
        for (const Mark& m : h.marks) wait(m);
      release(h);
      return false;
    });
  }

 private:
  std::vector<Hold> holds_;
  bool capturing_ = false;

  template <class Keep>
  void keep_if(Keep&& keep) {
    size_t kept = 0;
    for (size_t i = 0; i < holds_.size(); ++i) {
      if (!keep(holds_[i])) continue;
      if (kept != i) holds_[kept] = std::move(holds_[i]);  // never onto itself: that would empty its marks
      ++kept;
    }
    holds_.resize(kept);
  }
};

}  // namespace dlsim::cuda
