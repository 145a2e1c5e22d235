#include "workloads/op_attributes.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <stdexcept>

#include "workloads/collective_graph_op.h"
#include "workloads/internal/model_builder_helpers.h"
#include "workloads/llama_models.h"
#include "workloads/model_builder.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

std::vector<Attr> all_attributes() {
  std::vector<Attr> v;
  for (size_t i = 0; i < kAttrCount; ++i) v.push_back(static_cast<Attr>(i));
  return v;
}

std::vector<OtherOp> all_sub_kinds() {
  std::vector<OtherOp> v;
  for (int i = 1; i <= static_cast<int>(kLastOtherOp); ++i) v.push_back(static_cast<OtherOp>(i));
  return v;
}

Op op_of(OpKind kind, OtherOp other = OtherOp::None) {
  Op o;
  o.name = "probe";
  o.kind = kind;
  o.other = other;
  return o;
}

using KindKey = std::pair<OpKind, OtherOp>;

// The attributes the builders, the training synthesis and the memory-format pass set, per kind and sub-kind, over
// graphs that between them reach every option that adds one.
struct Seen {
  std::map<KindKey, std::set<Attr>> attrs;
  std::set<KindKey> kinds;

  void add(const Graph& g) {
    for (const Op& op : g.ops()) {
      const KindKey key{op.kind, op.kind == OpKind::GradAccumulate ? OtherOp::None : op.other};
      kinds.insert(key);
      for (const auto& [name, value] : op.attrs.by_name()) {
        const std::optional<AttrName> a = attr_named(name);
        INFO(g.name << ": op " << op.name << " (" << to_string(op.kind) << "/" << to_string(op.other) << ") carries "
                    << name);
        REQUIRE(a);
        // every attribute an op carries is declared for it, the copies the training synthesis makes included
        REQUIRE(find_declaration(op.kind, op.other, a->attr) != nullptr);
        attrs[key].insert(a->attr);
      }
    }
  }
  void add(const std::string& model, const ModelOptions& o) {
    const Graph f = build_forward_graph(model, o);
    add(f);  // views (Flatten, Reshape) live in forward graphs only
    add(make_training_graph(f, o.training));
  }
};

ModelOptions options(int64_t batch) {
  ModelOptions o;
  o.batch = batch;
  return o;
}

LlamaConfig tiny_llama() {
  LlamaConfig c;
  c.name = "tiny-llama";
  c.vocab = 512, c.hidden = 128, c.layers = 2, c.heads = 4, c.kv_heads = 2, c.intermediate = 256;
  c.max_positions = 256;
  return c;
}

}  // namespace

TEST_CASE("op attributes: one spelling each, and the stored names read back") {
  std::set<std::string> names;
  for (Attr a : all_attributes()) {
    INFO(to_string(a));
    CHECK(names.insert(to_string(a)).second);
    CHECK(std::string(meaning_of(a)).size() > 10);
    if (is_list(a)) {
      CHECK_FALSE(attr_named(to_string(a)));  // a list is stored by element only
      const auto e = attr_named(stored_name(a, 12));
      REQUIRE(e);
      CHECK(e->attr == a);
      CHECK(e->index == 12u);
    } else {
      const auto e = attr_named(to_string(a));
      REQUIRE(e);
      CHECK(e->attr == a);
      CHECK_FALSE(e->index);
    }
  }
  // The spellings retired with the per-kind declarations are no attributes any more.
  for (const char* retired : {"kh", "kw", "k_h", "padding", "dilation_h", "dim0", "perm", "perm01", "approximate"})
    CHECK_FALSE(attr_named(retired));
  // A sub-kind is written as an attribute in files: its name must not be one.
  for (OtherOp o : all_sub_kinds()) {
    CHECK_FALSE(attr_named(to_string(o)));
    CHECK(other_op_named(to_string(o)) == o);
  }
  CHECK_FALSE(other_op_named("none"));
}

TEST_CASE("op attributes: every op kind and every Other sub-kind has a declaration") {
  for (int k = 0; k <= static_cast<int>(OpKind::Other); ++k) {
    INFO(to_string(static_cast<OpKind>(k)));
    CHECK(has_declaration(static_cast<OpKind>(k), OtherOp::None));
  }
  for (OtherOp o : all_sub_kinds()) CHECK(has_declaration(OpKind::Other, o));
  CHECK_FALSE(has_declaration(OpKind::Conv2d, OtherOp::Select));
  // A backward kind carries its forward kind's attributes, with their defaults.
  CHECK(find_declaration(OpKind::Conv2dBwdFilter, OtherOp::None, Attr::stride_h) != nullptr);
  CHECK(find_declaration(OpKind::Conv2dBwdData, OtherOp::None, Attr::tf32)->default_value == 1);
  CHECK(find_declaration(OpKind::LinearBwdData, OtherOp::None, Attr::tf32)->default_value == 0);
  CHECK(find_declaration(OpKind::Other, OtherOp::ReduceBroadcast, Attr::inplace) != nullptr);
  // A gradient accumulation may follow any forward op, so it may carry any forward attribute, but two forward kinds
  // default tf32 differently: there it has no default.
  CHECK_FALSE(find_declaration(OpKind::GradAccumulate, OtherOp::None, Attr::tf32)->default_value);
  CHECK(find_declaration(OpKind::GradAccumulate, OtherOp::Lrn, Attr::lrn_size) != nullptr);
  CHECK(find_declaration(OpKind::GradAccumulate, OtherOp::None, Attr::adamw) == nullptr);
}

TEST_CASE("op attributes: setting or reading one the op's kind does not declare fails loudly") {
  Op conv = op_of(OpKind::Conv2d);
  CHECK_THROWS_WITH(conv.set_attr(Attr::kernel, 3), Catch::Contains("has no attribute 'kernel'"));
  CHECK_THROWS_AS(conv.attr(Attr::axis), std::logic_error);
  CHECK_THROWS_AS(conv.has_attr(Attr::lrn_size), std::logic_error);
  conv.set_attr(Attr::kernel_h, 3);
  CHECK(conv.attr(Attr::kernel_h) == 3);
  CHECK(conv.attr(Attr::dilation) == 1);  // declared with a default
  CHECK(conv.attr(Attr::tf32) == 1);      // PyTorch's default for convolutions
  CHECK_FALSE(conv.has_attr(Attr::dilation));
  CHECK_THROWS_WITH(conv.attr(Attr::stride_h), Catch::Contains("no default"));  // declared, required, unset
  CHECK(conv.attrs.by_name() == std::map<std::string, int64_t>{{"kernel_h", 3}});
  // A list attribute is set and read by element, a single one not.
  Op t = op_of(OpKind::Transpose);
  CHECK_THROWS_WITH(t.set_attr(Attr::perm, 1), Catch::Contains("is a list"));
  t.set_attr_list(Attr::perm, {0, 2, 1});
  CHECK(t.attr_list(Attr::perm) == std::vector<int64_t>{0, 2, 1});
  CHECK(t.attrs.by_name().count("perm2") == 1);
  CHECK_THROWS_WITH(t.set_attr(Attr::layout_transpose, 0, 1), Catch::Contains("is no list"));
  // An Other op's attributes are its sub-kind's; a sub-kind on another kind is refused.
  Op other = op_of(OpKind::Other);
  CHECK_THROWS_AS(other.set_attr(Attr::axis, 0), std::logic_error);
  Op select = op_of(OpKind::Other, OtherOp::Select);
  select.set_attr(Attr::axis, 1);
  CHECK_THROWS_AS(select.set_attr(Attr::lrn_size, 3), std::logic_error);
  CHECK(select.written_attributes() == std::map<std::string, int64_t>{{"axis", 1}, {"select", 1}});
  Op odd = op_of(OpKind::Conv2d, OtherOp::Select);
  CHECK_THROWS_AS(odd.set_attr(Attr::kernel_h, 1), std::logic_error);
  CHECK_FALSE(odd.declares(Attr::kernel_h));
  // The builder's path: an undeclared attribute stops the layer being built.
  Graph g;
  g.name = "probe";
  CHECK_THROWS_AS(workloads_internal::emit(g, "relu", OpKind::Relu, {}, {}, 0, {{Attr::axis, 1}}), std::logic_error);
  CHECK(g.ops().empty());
}

TEST_CASE("op attributes: each kind's declared set is what the builders, the synthesis and the passes set") {
  Seen seen;
  for (const ModelInfo& m : model_zoo())
    if (!m.llm) seen.add(m.name, options(2));
  // the options that add attributes: precision (casts, loss scaling, layout transposes), memory format, TF32,
  // fused kernels, the optimizer
  ModelOptions o = options(2);
  o.training.precision = Precision::MixedFP16;
  seen.add("resnet18", o);
  seen.add("mobilenet_v2", o);
  o.training.memory_format = MemoryFormat::NHWC;
  seen.add("resnet18", o);
  for (Tf32 t : {Tf32::Off, Tf32::All}) {
    o = options(2);
    o.training.tf32 = t;
    seen.add("resnet18", o);
    seen.add("bert-base", o);
  }
  o = options(2);
  o.training.kernels = Kernels::Fused;
  for (Optimizer opt : {Optimizer::SgdMomentum, Optimizer::AdamW}) {
    o.training.optimizer = opt;
    seen.add("resnet18", o);
    seen.add("bert-base", o);
  }
  o.training.kernels = Kernels::Eager;
  seen.add("cifar-resnet20", o);
  // a Pad a gradient flows back through (the zoo's models pad only their labels since the Llama head stopped
  // shifting its logits)
  {
    ModelBuilder b("pad-probe", 2);
    b.cross_entropy_loss(b.pad(b.linear(b.input({2, 8}, DType::F32, "x"), 4, false, "fc"), {0, 0, 0, 1}, "pad"));
    const Graph f = b.finish();
    seen.add(f);
    seen.add(make_training_graph(f, TrainingOptions{}));
  }
  // the Llama family's layers, on a tiny config, both attentions, 16-bit too
  for (Attention a : {Attention::Eager, Attention::SdpaFlash})
    for (Precision p : {Precision::FP32, Precision::MixedBF16}) {
      ModelOptions lo = options(1);
      lo.seq_len = 16;
      lo.attention = a;
      lo.training.precision = p;
      const Graph f = build_llama(tiny_llama(), lo);
      seen.add(f);
      seen.add(make_training_graph(f, lo.training));
    }
  // kernels: fused builds each RMSNorm as one op (16-bit: with its fp32 copy of x)
  for (Precision p : {Precision::MixedBF16, Precision::BF16}) {
    ModelOptions lo = options(1);
    lo.seq_len = 16;
    lo.training.precision = p;
    lo.training.kernels = Kernels::Fused;
    const Graph f = build_llama(tiny_llama(), lo);
    seen.add(f);
    seen.add(make_training_graph(f, lo.training));
  }

  // tensor parallel: Megatron's f views (grad_all_reduce, ranks_per_node) and the all-reduces of f and g
  {
    ModelOptions lo = options(1);
    lo.seq_len = 16;
    lo.tp = 2;
    const Graph f = build_llama(tiny_llama(), lo);
    seen.add(f);
    seen.add(make_training_graph(f, lo.training));
  }
  // the other collectives (the parallel layouts will emit them), made as hw/collective_op.h's add_collective makes
  // them (hw/collective_op_test.cc checks it)
  {
    Graph c;
    for (OpKind k : {OpKind::AllReduce, OpKind::AllGather, OpKind::ReduceScatter, OpKind::Broadcast})
      c.add_op(collective_graph_op(to_string(k), k, 0, 2, 0, 0, 0, Phase::Backward));
    seen.add(c);
  }

  // Every declared kind is built, and every attribute a kind declares of its own is set somewhere: no declaration
  // is dead. (The stand-in kernel is the simulator's tests'; an Other op of no sub-kind is what a backend refuses.)
  for (int k = 0; k <= static_cast<int>(OpKind::Other); ++k) {
    for (OtherOp other : {OtherOp::None, OtherOp::Select, OtherOp::Tanh, OtherOp::Lrn, OtherOp::RotaryEmbedding,
                          OtherOp::ReduceBroadcast, OtherOp::AmpUnscale, OtherOp::Pow, OtherOp::Mean,
                          OtherOp::Rsqrt}) {
      const OpKind kind = static_cast<OpKind>(k);
      if ((kind == OpKind::Other) == (other == OtherOp::None) || !has_declaration(kind, other)) continue;
      if (kind == OpKind::ZeroGrad) continue;  // declared for completeness; no synthesis emits it
      INFO(to_string(kind) << "/" << to_string(other));
      CHECK(seen.kinds.count({kind, other}) == 1);
      for (const AttrDecl& d : own_attributes(kind, other)) {
        INFO("attribute " << to_string(d.attr));
        CHECK(seen.attrs[{kind, other}].count(d.attr) == 1);
      }
    }
  }
}
