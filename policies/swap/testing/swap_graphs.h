#pragma once
// Hand-made iterations for the swap policies' tests, with profiles set by hand so that every score, index and
// position in the tests can be worked out on paper (the tests show the working).
#include <cmath>
#include <string>
#include <vector>

#include "hw/cost_model.h"
#include "common/byte_units.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim::testing {

constexpr TimeNs kMs = 1'000'000;

// latency + bytes x ns_per_byte per direction: D2H 1 ns/B, H2D 0.5 ns/B, 10 us each.
class TestLink : public TransferModel {
 public:
  TimeNs copy_time(CopyDir dir, uint64_t bytes, bool) const override {
    return latency(dir) + static_cast<TimeNs>(std::llround(static_cast<double>(bytes) * 1e9 / bandwidth(dir, true)));
  }
  double bandwidth(CopyDir dir, bool) const override { return dir == CopyDir::DeviceToHost ? 1e9 : 2e9; }
  TimeNs latency(CopyDir) const override { return 10'000; }
};

inline TensorId add_tensor(Graph& g, const std::string& name, uint64_t bytes, bool persistent = false) {
  Tensor t;
  t.name = name;
  t.bytes = bytes;
  t.persistent = persistent;
  t.kind = persistent ? TensorKind::Weight : TensorKind::Activation;
  return g.add_tensor(t);
}

inline OpId add_op(Graph& g, const std::string& name, std::vector<TensorId> in, std::vector<TensorId> out,
                   Phase phase = Phase::Forward, OpId forward_op = -1) {
  Op o;
  o.name = name;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.phase = phase;
  o.forward_op = forward_op;
  return g.add_op(o);
}

// Three activations written one after another and read back in reverse around a long op D that makes the
// peak, with filler ops (reading a 256 KiB weight w) so that SINGA's ready margins fall inside the absences:
//   pos  op  reads   writes  time (ms)      pos  op  reads   writes  time (ms)
//   0    A   -       t1 2M   0-1            6    D   -       s 8M    6-16
//   1    B   -       t2 4M   1-2            7-9  n4..n6 w    -       16-19, 1 ms each
//   2    C   -       t3 16M  2-3            10   E   t3, s   -       19-20
//   3-5  n1..n3 w    -       3-6            11   F   t2      -       20-21
//                                           12   G   t1      -       21-22
struct NestedAbsences {
  Graph g;
  IterationProfile profile;
  Schedule schedule;
  TensorId t1, t2, t3, s, w;
  NestedAbsences() {
    w = add_tensor(g, "w", kMiB / 4, true);
    t1 = add_tensor(g, "t1", 2 * kMiB);
    t2 = add_tensor(g, "t2", 4 * kMiB);
    t3 = add_tensor(g, "t3", 16 * kMiB);
    s = add_tensor(g, "s", 8 * kMiB);
    std::vector<std::pair<TimeNs, TimeNs>> times;
    auto op = [&](const std::string& n, std::vector<TensorId> in, std::vector<TensorId> out, TimeNs start, TimeNs end) {
      add_op(g, n, std::move(in), std::move(out));
      times.push_back({start * kMs, end * kMs});
    };
    op("A", {}, {t1}, 0, 1);
    op("B", {}, {t2}, 1, 2);
    op("C", {}, {t3}, 2, 3);
    for (int i = 0; i < 3; ++i) op("n" + std::to_string(i + 1), {w}, {}, 3 + i, 4 + i);
    op("D", {}, {s}, 6, 16);
    for (int i = 0; i < 3; ++i) op("n" + std::to_string(i + 4), {w}, {}, 16 + i, 17 + i);
    op("E", {t3, s}, {}, 19, 20);
    op("F", {t2}, {}, 20, 21);
    op("G", {t1}, {}, 21, 22);
    schedule = serial_schedule_of(g);
    profile.order = schedule.order;
    for (auto [a, b] : times) {
      profile.op_start.push_back(a);
      profile.op_end.push_back(b);
    }
    profile.iteration_ns = 22 * kMs;
    profile.peak_live_bytes = 30 * kMiB + kMiB / 4;
  }
};

// A two-convolution network by hand, forward and backward, with what PyTorch saves (workloads/training_backward.cc):
//   pos  op                 reads          writes   | pos  op (of forward op)       reads           writes
//   0    conv1              x 1M, w1       a1 4M    | 5    loss.bwd (4)             l               g_a2
//   1    relu1 (in place)   a1             r1 4M    | 6    conv2.bwd_data (3)       g_a2, w2        g_q1
//   2    pool1 (max)        r1             q1 1M    | 7    conv2.bwd_filter (3)     g_a2, q1        g_w2
//   3    conv2              q1, w2 256K    a2       | 8    pool1.bwd (2)            g_q1, r1        g_r1
//   4    loss               a2             l 512K   | 9    relu1.bwd (1)            g_r1, r1        g_a1
//                                                   | 10   conv1.bwd_filter (0)     g_a1, x         g_w1
// (relu1 writes a new tensor r1 here; its backward reads its output, max-pool's its input.)
struct SmallConvNet {
  Graph g;
  Schedule schedule;
  TensorId x, w1, w2, a1, r1, q1, a2, l;
  SmallConvNet() {
    x = add_tensor(g, "x", kMiB);
    g.tensor(x).kind = TensorKind::Input;
    w1 = add_tensor(g, "w1", kMiB / 4, true);
    w2 = add_tensor(g, "w2", kMiB / 4, true);
    a1 = add_tensor(g, "a1", 4 * kMiB);
    r1 = add_tensor(g, "r1", 4 * kMiB);
    q1 = add_tensor(g, "q1", kMiB);
    a2 = add_tensor(g, "a2", kMiB / 2);
    l = add_tensor(g, "l", kMiB / 2);
    auto grad = [&](const std::string& n, uint64_t b) {
      const TensorId t = add_tensor(g, n, b);
      g.tensor(t).kind = TensorKind::Gradient;
      return t;
    };
    const TensorId g_a2 = grad("g_a2", kMiB / 2), g_q1 = grad("g_q1", kMiB), g_w2 = grad("g_w2", kMiB / 4),
                   g_r1 = grad("g_r1", 4 * kMiB), g_a1 = grad("g_a1", 4 * kMiB), g_w1 = grad("g_w1", kMiB / 4);
    const OpId conv1 = add_op(g, "conv1", {x, w1}, {a1});
    g.op(conv1).kind = OpKind::Conv2d;
    const OpId relu1 = add_op(g, "relu1", {a1}, {r1});
    g.op(relu1).kind = OpKind::Relu;
    const OpId pool1 = add_op(g, "pool1", {r1}, {q1});
    g.op(pool1).kind = OpKind::MaxPool;
    const OpId conv2 = add_op(g, "conv2", {q1, w2}, {a2});
    g.op(conv2).kind = OpKind::Conv2d;
    const OpId loss = add_op(g, "loss", {a2}, {l});
    g.op(loss).kind = OpKind::CrossEntropyLoss;
    add_op(g, "loss.bwd", {l}, {g_a2}, Phase::Backward, loss);
    add_op(g, "conv2.bwd_data", {g_a2, w2}, {g_q1}, Phase::Backward, conv2);
    add_op(g, "conv2.bwd_filter", {g_a2, q1}, {g_w2}, Phase::Backward, conv2);
    add_op(g, "pool1.bwd", {g_q1, r1}, {g_r1}, Phase::Backward, pool1);
    add_op(g, "relu1.bwd", {g_r1, r1}, {g_a1}, Phase::Backward, relu1);
    add_op(g, "conv1.bwd_filter", {g_a1, x}, {g_w1}, Phase::Backward, conv1);
    schedule = serial_schedule_of(g);
  }
};

}  // namespace dlsim::testing
