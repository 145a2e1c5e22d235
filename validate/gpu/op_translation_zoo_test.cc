// Every op of every fp32 zoo model must translate to a real kernel: the CUDA backend cannot run a graph whose
// attributes or shapes it does not understand, and this is the check CI can make without a GPU.
#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "validate/gpu/op_translation.h"
#include "workloads/zoo.h"

using namespace dlsim;

TEST_CASE("plan: every op of every zoo model translates to a kernel", "[plan][zoo]") {
  for (const ModelInfo& m : model_zoo()) {
    if (m.llm) continue;  // no CUDA kernels yet for RMSNorm, rotary, repeat_kv, SiLU and FlashAttention
    SECTION(m.name) {
      ModelOptions o;
      o.batch = 2;
      if (m.name.rfind("bert", 0) == 0 || m.name == "gpt2-small") o.seq_len = 64;
      if (m.sdpa_flash) o.attention = Attention::Eager;  // the harness has no FlashAttention kernel
      const Graph g = build_training_graph(m.name, o);
      std::vector<OpTranslation> plans;
      REQUIRE_NOTHROW(plans = translate_graph(g));
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
      if (m.sdpa_flash) o.attention = Attention::Eager;  // the harness has no FlashAttention kernel
      const Graph g = build_training_graph(m.name, o);
      std::vector<OpTranslation> plans;
      REQUIRE_NOTHROW(plans = translate_graph(g));
      CHECK(plans.size() == g.ops().size());
      size_t bf16_library_calls = 0;
      for (const OpTranslation& p : plans) bf16_library_calls += p.lib != KernelLib::Ours && p.dtype == DType::BF16;
      CHECK(bf16_library_calls > 0);
    }
  }
}

// The Llama family's ops have no kernel in the harness yet: planning refuses them by name rather than running
// something else.
TEST_CASE("plan: a Llama-family graph is refused, naming the op kind the harness lacks", "[plan][zoo]") {
  ModelOptions o;
  o.batch = 1;
  o.seq_len = 16;
  const Graph g = build_training_graph("qwen2.5-0.5b", o);
  CHECK_THROWS_AS(translate_graph(g), ConfigError);
  int refused = 0;
  for (const Op& op : g.ops()) {
    const bool rsqrt = op.other == OtherOp::Rsqrt && op.phase == Phase::Forward;
    if (!rsqrt && op.kind != OpKind::FlashAttentionBwd) continue;
    try {
      translate_op(g, op);
      FAIL("no error for " << op.name);
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains(std::string("no kernel for ") + (rsqrt ? "rsqrt" : to_string(op.kind))));
      ++refused;
    }
  }
  // the rsqrt of two norms per layer and the final one; one attention backward per layer
  CHECK(refused == 2 * 24 + 1 + 24);
}
