// Every op of every fp32 zoo model must translate to a real kernel: the CUDA backend cannot run a graph whose
// attributes or shapes it does not understand, and this is the check CI can make without a GPU.
#include <catch2/catch.hpp>

#include "validate/cuda_plan.h"
#include "workloads/zoo.h"

using namespace dlsim;

TEST_CASE("plan: every op of every zoo model translates to a kernel", "[plan][zoo]") {
  for (const ModelInfo& m : model_zoo()) {
    if (m.llm) continue;  // no CUDA kernels yet for RMSNorm, rotary, repeat_kv, SiLU and FlashAttention
    SECTION(m.name) {
      ModelOptions o;
      o.batch = 2;
      if (m.name.rfind("bert", 0) == 0 || m.name == "gpt2-small") o.seq_len = 64;
      const Graph g = build_training_graph(m.name, o);
      std::vector<KernelPlan> plans;
      REQUIRE_NOTHROW(plans = plan_graph(g));
      CHECK(plans.size() == g.ops().size());
    }
  }
}

// Mixed precision (bf16 activations, fp32 master weights, autocast's casts as Copy ops): every op maps too,
// and every cuDNN/cuBLAS call sees one data type.
TEST_CASE("plan: every op of every zoo model translates at mixed precision", "[plan][zoo]") {
  for (const ModelInfo& m : model_zoo()) {
    if (m.llm) continue;  // no CUDA kernels yet for RMSNorm, rotary, repeat_kv, SiLU and FlashAttention
    SECTION(m.name) {
      ModelOptions o;
      o.batch = 2;
      o.training.precision = Precision::MixedBF16;
      o.training.memory_format = MemoryFormat::NHWC;  // the harness refuses NCHW's layout transposes (the simulator's)
      if (m.name.rfind("bert", 0) == 0 || m.name == "gpt2-small") o.seq_len = 64;
      const Graph g = build_training_graph(m.name, o);
      std::vector<KernelPlan> plans;
      REQUIRE_NOTHROW(plans = plan_graph(g));
      CHECK(plans.size() == g.ops().size());
      size_t bf16_library_calls = 0;
      for (const KernelPlan& p : plans) bf16_library_calls += p.lib != KernelLib::Ours && p.dtype == DType::BF16;
      CHECK(bf16_library_calls > 0);
    }
  }
}
