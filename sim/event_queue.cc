#include "sim/event_queue.h"

#include <stdexcept>
#include <utility>

namespace dlsim {

uint64_t EventQueue::push(TimeNs time, uint16_t type, uint32_t payload, uint32_t generation) {
  Event e;
  e.time = time;
  e.seq = next_seq_++;
  e.payload = payload;
  e.generation = generation;
  e.type = type;
  heap_.push_back(e);
  sift_up(heap_.size() - 1);
  return e.seq;
}

Event EventQueue::pop() {
  if (heap_.empty()) throw std::logic_error("EventQueue::pop on an empty queue");
  Event out = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  return out;
}

// Hand-written sifts (rather than std::push_heap) move the hole instead of swapping at each level.
void EventQueue::sift_up(size_t i) {
  Event e = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(size_t i) {
  const size_t n = heap_.size();
  Event e = heap_[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], e)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = e;
}

}  // namespace dlsim
