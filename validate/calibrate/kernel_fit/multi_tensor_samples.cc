#include "validate/calibrate/kernel_fit/multi_tensor_samples.h"

#include <numeric>
#include <optional>

#include "common/strings.h"
#include "hw/fitted/multi_tensor.h"
#include "workloads/shape.h"

namespace dlsim {
namespace {

struct SgdPass {
  const char* op;  // the trace's host op
  int lists;       // multi_tensor_apply's depth
  int64_t moved;   // tensors of a parameter's size each element moves, read and written
};
constexpr SgdPass kSgdPasses[] = {
    {"aten::_foreach_add", 3, 3}, {"aten::_foreach_mul_", 1, 2}, {"aten::_foreach_add_", 2, 3}};

std::optional<SgdPass> sgd_pass(const std::string& name) {
  for (const SgdPass& p : kSgdPasses)
    if (name == p.op) return p;
  return std::nullopt;
}

// The parameters' elements in the optimizer's list order, and their dtype: the zoo's foreach SGD updates' weights;
// in a recorded step (dlsim import-torch), the tensors of its one-list foreach pass (the momentum's _foreach_mul_
// over the buffers, the fewest inputs of its passes), in the recorded list's order. `one_group` false where they
// are of more than one dtype.
std::vector<int64_t> optimizer_numels(const Graph& g, std::optional<DType>& dtype, bool& one_group) {
  std::vector<int64_t> numels;
  one_group = true;
  auto add = [&](const Tensor& t) {
    if (dtype && *dtype != t.dtype) one_group = false;
    dtype = t.dtype;
    numels.push_back(numel(t.shape));
  };
  for (const Op& op : g.ops())
    if (op.kind == OpKind::SgdMomentumUpdate && op.attr(Attr::foreach_bytes) > 0 && !op.inputs.empty())
      add(g.tensor(op.inputs.front()));
  if (!numels.empty()) return numels;
  const Op* fewest = nullptr;
  for (const Op& op : g.ops())
    if (op.kind == OpKind::Other && op.other == OtherOp::ForeachPass && op.phase == Phase::Optimizer &&
        !op.inputs.empty() && (!fewest || op.inputs.size() < fewest->inputs.size()))
      fewest = &op;
  if (fewest)
    for (TensorId t : fewest->inputs) add(g.tensor(t));
  return numels;
}

}  // namespace

void append_multi_tensor_samples(const MatchedProfile& p, double gap_us, TraceSamples& out,
                                 std::map<std::string, std::map<std::string, size_t>>& skipped) {
  const Graph& g = *p.graph;
  std::optional<DType> dtype;
  bool one_group = true;
  const std::vector<int64_t> numels = optimizer_numels(g, dtype, one_group);
  for (const ProfileStep& s : p.steps) {
    // torch.optim.SGD's step: its record_function span is "Optimizer.step#SGD.step"
    const bool sgd = s.optimizer != nullptr && s.optimizer->name.find("#SGD.") != std::string::npos;
    for (const ProfileHostOp& h : s.optimizer_ops) {
      const std::string& name = p.trace->events[h.event].name;
      if (name.rfind("aten::_foreach_", 0) != 0 || h.kernels == 0) continue;
      ++out.units;
      out.kernel_us += h.kernel_us;
      const std::optional<SgdPass> pass = sgd_pass(name);
      if (!sgd || numels.empty() || !pass) {
        ++skipped["not a pass of a foreach SGD step (the class is fitted to its passes)"][name];
        continue;
      }
      if (!one_group) {
        ++skipped["the graph's parameters are of more than one dtype (which group ran is not known)"][name];
        continue;
      }
      const int64_t element_bytes = static_cast<int64_t>(dtype_bytes(*dtype));
      const std::vector<KernelShape> launches = multi_tensor_pass_shapes(numels, pass->lists, *dtype,
                                                                         pass->moved * element_bytes);
      if (launches.size() != h.kernel_each_us.size()) {
        ++skipped["its kernels are not the rule's launches (as many, in order)"][name];
        continue;
      }
      ++out.units_sampled;
      out.sampled_us += h.kernel_us;
      for (size_t i = 0; i < launches.size(); ++i) {
        FitSample f;
        f.shape = launches[i];
        f.cls = class_candidates(f.shape).front();
        f.us = h.kernel_each_us[i] + gap_us;
        f.shape_key = f.cls + " bytes=" + significant(f.shape.bytes) + " chunk=" + significant(f.shape.chunk_bytes);
        f.model = g.name;
        f.record = f.paired_record = out.samples.size();
        f.device_timed = true;
        out.samples.push_back(std::move(f));
      }
    }
  }
}

}  // namespace dlsim
