// Tensor parallelism in the Llama builder (workloads/tensor_parallel.h), worked by hand on a two-layer model: one
// rank's parameters at tp = 2 (column and row shards, replicated norms, embedding and head), the all-reduces of
// Megatron's g in forward and f in backward with their bytes, where the synthesis places them, the vocab-parallel
// embedding, head and cross entropy, the plain graph at tp = 1, and the errors naming the field that does not
// divide. The simulated step on the shipped H100 file is
// sim/tensor_parallel_sim_test.cc.
#include "workloads/tensor_parallel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "common/config_error.h"
#include "workloads/llama_models.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

// Two layers, hidden 256, 8 heads of 32 over 4 key/value heads, an MLP of 512, a vocabulary of 1,000.
LlamaConfig two_layer() { return {"tiny-llama", "test", 1000, 256, 2, 8, 4, 512, 1024, false, false}; }

ModelOptions opts_tp(int64_t tp) {
  ModelOptions o;
  o.batch = 2;
  o.seq_len = 64;
  o.tp = tp;
  o.training.optimizer = Optimizer::AdamW;
  return o;
}

int64_t learnable_elements(const Graph& g) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors())
    if (t.learnable) n += numel(t.shape);
  return n;
}

const Tensor& tensor_named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors())
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return g.tensors().front();
}

OpId op_named(const Graph& g, const std::string& name) {
  for (const Op& o : g.ops())
    if (o.name == name) return o.id;
  FAIL("no op " << name);
  return -1;
}

std::vector<const Op*> collectives(const Graph& g, Phase phase) {
  std::vector<const Op*> out;
  for (const Op& o : g.ops())
    if (is_collective(o.kind) && o.phase == phase) out.push_back(&o);
  return out;
}

template <class F>
std::string config_key_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.key();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("tensor parallel: tp 1 is the plain graph, op for op") {
  ModelOptions plain = opts_tp(1), marked = opts_tp(1);
  marked.tp_across_nodes = true;  // means nothing at tp 1
  const Graph a = make_training_graph(build_llama(two_layer(), plain), plain.training);
  const Graph b = make_training_graph(build_llama(two_layer(), marked), marked.training);
  REQUIRE(a.ops().size() == b.ops().size());
  REQUIRE(a.tensors().size() == b.tensors().size());
  for (size_t i = 0; i < a.ops().size(); ++i) {
    const Op &x = a.ops()[i], &y = b.ops()[i];
    INFO(x.name);
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.inputs == y.inputs);
    CHECK(x.outputs == y.outputs);
    CHECK(x.bytes_read == y.bytes_read);
    CHECK(x.attrs.by_name() == y.attrs.by_name());
    CHECK(!is_collective(x.kind));
  }
  // and its parameters are the config's: 1,000 x 256 twice, 2 layers of 590,336, the final norm's 256
  CHECK(learnable_elements(a) == static_cast<int64_t>(llama_parameter_count(two_layer())));
  CHECK(learnable_elements(a) == 1'692'928);
}

TEST_CASE("tensor parallel: one rank's parameters at tp 2, by hand") {
  const Graph f = build_llama(two_layer(), opts_tp(2));
  // Column-parallel: q 128 x 256 (4 of 8 heads of 32), k and v 64 x 256 (2 of 4 key/value heads), gate and up
  // 256 x 256 (256 of 512 features). Row-parallel: o 256 x 128, down 256 x 256. Replicated: the norms (256).
  // Vocab-parallel: the embedding and lm_head, 1,000 rows padded to a multiple of 128 x 2 (1,024), 512 a rank.
  const std::string p = "model.layers.1.";
  CHECK(tensor_named(f, p + "self_attn.q_proj.weight").shape == std::vector<int64_t>{128, 256});
  CHECK(tensor_named(f, p + "self_attn.k_proj.weight").shape == std::vector<int64_t>{64, 256});
  CHECK(tensor_named(f, p + "self_attn.v_proj.weight").shape == std::vector<int64_t>{64, 256});
  CHECK(tensor_named(f, p + "self_attn.o_proj.weight").shape == std::vector<int64_t>{256, 128});
  CHECK(tensor_named(f, p + "mlp.gate_proj.weight").shape == std::vector<int64_t>{256, 256});
  CHECK(tensor_named(f, p + "mlp.up_proj.weight").shape == std::vector<int64_t>{256, 256});
  CHECK(tensor_named(f, p + "mlp.down_proj.weight").shape == std::vector<int64_t>{256, 256});
  CHECK(tensor_named(f, p + "input_layernorm.weight").shape == std::vector<int64_t>{256});
  CHECK(tensor_named(f, "model.embed_tokens.weight").shape == std::vector<int64_t>{512, 256});
  CHECK(tensor_named(f, "lm_head.weight").shape == std::vector<int64_t>{512, 256});
  // Per layer 32,768 + 2 x 16,384 + 32,768 (attention) + 3 x 65,536 (MLP) + 512 (norms) = 295,424; with the
  // embedding, the head and the final norm: 131,072 + 2 x 295,424 + 256 + 131,072.
  CHECK(learnable_elements(f) == 853'248);
  // tp 8 pads the vocabulary to 1,024 too (a multiple of 128 x 8): 128 rows a rank
  ModelOptions o8 = opts_tp(8);
  LlamaConfig c8 = two_layer();
  c8.heads = c8.kv_heads = 8;
  CHECK(tensor_named(build_llama(c8, o8), "model.embed_tokens.weight").shape == std::vector<int64_t>{128, 256});
}

TEST_CASE("tensor parallel: Megatron's g all-reduces in forward, f's in backward, each (B, S, H) at tp 2") {
  const ModelOptions o = opts_tp(2);
  const Graph t = make_training_graph(build_llama(two_layer(), o), o.training);
  const int64_t activation = 2 * 64 * 256 * 4;  // (B, S, H) fp32: 131,072 bytes
  const int64_t per_row = 2 * 64 * 4;           // one fp32 per token: 512 bytes
  const auto fwd = collectives(t, Phase::Forward), bwd = collectives(t, Phase::Backward);
  // forward: the embedding's partial lookups; o_proj's and down_proj's partial sums in two layers; the
  // vocab-parallel cross entropy's maximum, target logit and sum of exponentials
  REQUIRE(fwd.size() == 8);
  const std::vector<std::pair<std::string, int64_t>> forward = {
      {"model.embed_tokens.tp_all_reduce", activation},
      {"model.layers.0.self_attn.tp_all_reduce", activation},
      {"model.layers.0.mlp.tp_all_reduce", activation},
      {"model.layers.1.self_attn.tp_all_reduce", activation},
      {"model.layers.1.mlp.tp_all_reduce", activation},
      {"loss.vocab_parallel_max", per_row},
      {"loss.vocab_parallel_target_logit", per_row},
      {"loss.vocab_parallel_sum_exp", per_row}};
  for (size_t i = 0; i < fwd.size(); ++i) {
    const Op* c = fwd[i];
    INFO(c->name);
    CHECK(c->name == forward[i].first);
    CHECK(c->kind == OpKind::AllReduce);
    CHECK(c->attr(Attr::message_bytes) == forward[i].second);
    CHECK(c->attr(Attr::ranks) == 2);
    CHECK(c->attr(Attr::ranks_per_node) == 2);
    CHECK(c->attr(Attr::comm_stream) == kTensorParallelStreamTag);
    CHECK(c->bytes_read == static_cast<uint64_t>(forward[i].second));  // ring bus factor 2 (2 - 1) / 2 = 1
    if (forward[i].second == activation) CHECK(c->inputs == c->outputs);  // in place on the partial sum
  }
  // the loss reads the last statistic, so it waits for all three
  const Op& loss = t.op(op_named(t, "loss"));
  CHECK(std::find(loss.inputs.begin(), loss.inputs.end(), fwd[7]->outputs[0]) != loss.inputs.end());
  // backward: the gradients of the two norms' outputs in two layers, and of the final norm's (the head's input)
  REQUIRE(bwd.size() == 5);
  const std::vector<std::string> backward = {"model.norm.out.grad_all_reduce",
                                             "model.layers.1.post_attention_layernorm.out.grad_all_reduce",
                                             "model.layers.1.input_layernorm.out.grad_all_reduce",
                                             "model.layers.0.post_attention_layernorm.out.grad_all_reduce",
                                             "model.layers.0.input_layernorm.out.grad_all_reduce"};
  for (size_t i = 0; i < bwd.size(); ++i) {
    const Op* c = bwd[i];
    INFO(c->name);
    CHECK(c->name == backward[i]);
    CHECK(c->kind == OpKind::AllReduce);
    CHECK(c->attr(Attr::message_bytes) == activation);
    CHECK(t.tensor(c->inputs[0]).kind == TensorKind::Gradient);
    CHECK(c->inputs == c->outputs);
  }
  // Each after the last column-parallel projection's input gradient is summed in (q_proj's, the first reader in
  // forward) and before the norm's backward reads it.
  const OpId ar = bwd[4]->id;
  CHECK(ar > op_named(t, "model.layers.0.self_attn.q_proj.bwd_data"));
  CHECK(ar < op_named(t, "model.layers.0.input_layernorm.bwd1"));
  const Op& norm_bwd = t.op(op_named(t, "model.layers.0.input_layernorm.bwd1"));
  CHECK(std::find(norm_bwd.inputs.begin(), norm_bwd.inputs.end(), bwd[4]->outputs[0]) != norm_bwd.inputs.end());
  // The forward g passes its gradient through: no backward op of its own.
  for (const Op& op : t.ops()) CHECK(op.forward_op != fwd[1]->id);
}

TEST_CASE("tensor parallel: sequence parallel gathers and scatters the sequence, by hand at tp 2") {
  ModelOptions o = opts_tp(2);
  o.sequence_parallel = true;
  const Graph f = build_llama(two_layer(), o);
  // the norms and the residual stream on 32 of 64 tokens; the projections on all 64
  CHECK(tensor_named(f, "model.layers.0.input_layernorm.out").shape == std::vector<int64_t>{2, 32, 256});
  CHECK(tensor_named(f, "model.layers.1.mlp.residual.out").shape == std::vector<int64_t>{2, 32, 256});
  CHECK(tensor_named(f, "model.layers.0.self_attn.tp_enter.out").shape == std::vector<int64_t>{2, 64, 256});
  CHECK(learnable_elements(f) == 853'248);  // the same shards as without
  const Graph t = make_training_graph(f, o.training);
  const int64_t whole = 2 * 64 * 256 * 4;  // nccl-tests' S: the gathered (B, S, H) fp32, 131,072 bytes
  std::map<std::pair<OpKind, Phase>, int> count;
  for (const Op& c : t.ops()) {
    if (!is_collective(c.kind)) continue;
    INFO(c.name);
    ++count[{c.kind, c.phase}];
    if (c.kind == OpKind::AllReduce) {  // only the loss's statistics stay all-reduces
      CHECK(c.attr(Attr::message_bytes) == 2 * 64 * 4);
      continue;
    }
    CHECK(c.attr(Attr::message_bytes) == whole);
    CHECK(c.bytes_read == static_cast<uint64_t>(whole / 2));  // bus factor (2 - 1) / 2
    CHECK(c.attr(Attr::ranks) == 2);
    CHECK(c.attr(Attr::comm_stream) == kTensorParallelStreamTag);
    // the shard side is (B, S / tp, H), the whole side (B, S, H)
    const bool gather = c.kind == OpKind::AllGather;
    CHECK(t.tensor(gather ? c.inputs[0] : c.outputs[0]).bytes == static_cast<uint64_t>(whole / 2));
    CHECK(t.tensor(gather ? c.outputs[0] : c.inputs[0]).bytes == static_cast<uint64_t>(whole));
  }
  // forward: an all-gather before each of the four column-parallel blocks and the head, a reduce-scatter after the
  // embedding and each of the four row-parallel blocks; backward the conjugates, one each, and the re-gather of
  // each column-parallel block's input for its weight gradients; no f all-reduces
  CHECK(count[{OpKind::AllGather, Phase::Forward}] == 5);
  CHECK(count[{OpKind::ReduceScatter, Phase::Forward}] == 5);
  CHECK(count[{OpKind::AllReduce, Phase::Forward}] == 3);
  CHECK(count[{OpKind::ReduceScatter, Phase::Backward}] == 5);
  CHECK(count[{OpKind::AllGather, Phase::Backward}] == 10);
  CHECK(count[{OpKind::AllReduce, Phase::Backward}] == 0);
  // What is saved: no backward op reads a forward all-gather's output (Megatron keeps the S / tp shard); q, k and v
  // read one re-gathered copy, issued before v's input-gradient GEMM (the first of the block in backward).
  for (const Op& c : t.ops()) {
    if (c.kind != OpKind::AllGather || c.phase != Phase::Forward) continue;
    for (const Op& b : t.ops())
      if (b.phase == Phase::Backward)
        CHECK(std::find(b.inputs.begin(), b.inputs.end(), c.outputs[0]) == b.inputs.end());
  }
  const Op& regather = t.op(op_named(t, "model.layers.0.self_attn.tp_enter.regather"));
  CHECK(regather.id < op_named(t, "model.layers.0.self_attn.v_proj.bwd_data"));
  for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
    const Op& w = t.op(op_named(t, std::string("model.layers.0.self_attn.") + proj + ".bwd_weight"));
    CHECK(w.inputs.at(1) == regather.outputs[0]);
  }
  // the norm's backward reads the reduce-scattered gradient of its output
  const Op& rs = t.op(op_named(t, "model.layers.0.self_attn.tp_enter.bwd"));
  CHECK(rs.kind == OpKind::ReduceScatter);
  const Op& norm_bwd = t.op(op_named(t, "model.layers.0.input_layernorm.bwd1"));
  CHECK(std::find(norm_bwd.inputs.begin(), norm_bwd.inputs.end(), rs.outputs[0]) != norm_bwd.inputs.end());
}

TEST_CASE("tensor parallel: tp_across_nodes lets the group fill nodes") {
  ModelOptions o = opts_tp(2);
  o.tp_across_nodes = true;
  const Graph t = make_training_graph(build_llama(two_layer(), o), o.training);
  for (const Op& c : t.ops())
    if (is_collective(c.kind)) CHECK(c.attr(Attr::ranks_per_node) == 0);
}

TEST_CASE("tensor parallel: a degree that does not divide is an error naming the config's field") {
  CHECK(config_key_of([] { build_llama(two_layer(), opts_tp(3)); }) == "num_attention_heads");
  LlamaConfig c = two_layer();
  c.kv_heads = 2;  // 8 heads over 2 groups: tp 4 splits the heads, not the groups (Megatron replicates none)
  CHECK(config_key_of([&] { build_llama(c, opts_tp(4)); }) == "num_key_value_heads");
  c = two_layer();
  c.intermediate = 514;
  CHECK(config_key_of([&] { build_llama(c, opts_tp(4)); }) == "intermediate_size");
  CHECK(config_key_of([] { build_llama(two_layer(), opts_tp(0)); }) == "tp");
  CHECK(config_key_of([] { build_llama(two_layer(), opts_tp(kMaxTensorParallel + 1)); }) == "tp");
  ModelOptions sp = opts_tp(2);
  sp.sequence_parallel = true;
  sp.seq_len = 63;  // the residual stream's tokens split over 2 ranks
  CHECK(config_key_of([&] { build_llama(two_layer(), sp); }) == "seq_len");
  // A model built whole refuses the option rather than dropping it.
  ModelOptions gpt = opts_tp(2);
  gpt.seq_len = 0;
  CHECK(config_key_of([&] { build_forward_graph("gpt2-small", gpt); }) == "tp");
}

TEST_CASE("tensor parallel: Llama-3-8B at tp 8, one rank's parameters by hand") {
  ModelOptions o;
  o.batch = 1;
  o.seq_len = 64;
  o.tp = 8;
  // vocabulary 128,256 padded to 129,024 (a multiple of 1,024): 16,128 rows x 4,096 for the embedding and for the
  // head, 66,060,288 each. A layer: q 4,096 x 512 (4 of 32 heads of 128), k and v 4,096 x 128 (1 of 8 groups), o
  // 512 x 4,096, gate/up/down 3 x 4,096 x 1,792 (of 14,336), norms 8,192: 27,271,168; 32 of them 872,677,376. With
  // the final norm: 1,004,802,048 a rank, beside 8,030,261,248 / 8 = 1,003,782,656 for an even split (the padding
  // and the replicated norms make the difference).
  CHECK(learnable_elements(build_llama(llama3_8b_config(), o)) == 1'004'802'048);
  o.sequence_parallel = true;
  CHECK(learnable_elements(build_llama(llama3_8b_config(), o)) == 1'004'802'048);
}
