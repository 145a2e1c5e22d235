#pragma once
// The simulator's future-event set: small plain events ordered by (time, sequence number) in a binary heap
// over a reserved vector. The sequence number makes ties deterministic (first scheduled, first served), and
// plain events (no closures) keep scheduling free of per-event allocation; the executor dispatches on `type`.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlsim {

using TimeNs = int64_t;

struct Event {
  TimeNs time = 0;
  uint64_t seq = 0;         // order of scheduling: breaks ties in time
  uint32_t payload = 0;     // e.g. the index of the activity the event concerns
  uint32_t generation = 0;  // lazy cancellation: the owner ignores an event whose generation is stale
  uint16_t type = 0;        // what happened; the meaning belongs to the owner of the queue
};

class EventQueue {
 public:
  explicit EventQueue(size_t reserve = 1024) { heap_.reserve(reserve); }

  // Schedules an event; returns its sequence number.
  uint64_t push(TimeNs time, uint16_t type, uint32_t payload = 0, uint32_t generation = 0);
  // The earliest event (smallest time, then smallest seq). Precondition: !empty().
  const Event& top() const { return heap_.front(); }
  Event pop();
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  uint64_t pushed() const { return next_seq_; }  // events scheduled so far
  void clear() { heap_.clear(); }

 private:
  // a before b when a is earlier: the heap keeps the earliest at the front.
  static bool earlier(const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  }
  void sift_up(size_t i);
  void sift_down(size_t i);

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace dlsim
