#include "hw/conv_scratch.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "hw/fitted/op_kernel_shapes.h"
#include "hw/measured_workspace.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;

namespace {
// A 3x3 convolution 16 -> 32 channels on 8x8 images, stride 1, pad 1: forward, backward-data and backward-filter
// (named as the zoo's synthesis names them), each with a workspace tensor of 1000 bytes (as the zoo's synthesis
// makes them) or none (as a recorded step). Without `dgrad` the backward-data op is left out: the first layer,
// whose input needs no gradient.
Graph conv_scratch_graph(int64_t n, bool with_workspace, bool dgrad = true) {
  Graph g;
  g.batch = n;
  const TensorId x = testing::add_tensor(g, "x", DType::F32, {n, 16, 8, 8});
  const TensorId w = testing::add_tensor(g, "w", DType::F32, {32, 16, 3, 3});
  const TensorId y = testing::add_tensor(g, "y", DType::F32, {n, 32, 8, 8});
  const TensorId gy = testing::add_tensor(g, "gy", DType::F32, {n, 32, 8, 8});
  const TensorId gx = testing::add_tensor(g, "gx", DType::F32, {n, 16, 8, 8});
  const TensorId gw = testing::add_tensor(g, "gw", DType::F32, {32, 16, 3, 3});
  std::vector<OpId> ops = {testing::add_op(g, OpKind::Conv2d, {x, w}, {y}, 1, 1, 1, "conv1")};
  if (dgrad) ops.push_back(testing::add_op(g, OpKind::Conv2dBwdData, {gy, w}, {gx}, 1, 1, 1, "conv1.bwd_data"));
  ops.push_back(testing::add_op(g, OpKind::Conv2dBwdFilter, {gy, x}, {gw}, 1, 1, 1, "conv1.bwd_filter"));
  for (OpId id : ops) {
    Op& o = g.op(id);
    for (auto [a, v] : std::initializer_list<std::pair<Attr, int64_t>>{{Attr::in_channels, 16}, {Attr::out_channels, 32}, {Attr::kernel_h, 3},
                        {Attr::kernel_w, 3}, {Attr::stride_h, 1}, {Attr::stride_w, 1}, {Attr::pad_h, 1},
                        {Attr::pad_w, 1}, {Attr::dilation, 1}, {Attr::groups, 1}})
      o.set_attr(a, v);
    if (with_workspace) {
      const TensorId ws = testing::add_tensor(g, o.name + ".workspace", DType::U8, {1000});
      g.tensor(ws).kind = TensorKind::Workspace;
      g.op(id).workspace = ws;
    }
  }
  return g;
}

std::string conv_scratch_test_key(const std::string& pass) {
  return conv_scratch_key(pass, "f32", "nchw", 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1);
}

// An entry of `pass` for a 3x3, pad 1 convolution (the test geometry's by default).
void put_entry(GpuSpec& s, const std::string& pass, std::vector<std::pair<int64_t, uint64_t>> by_batch,
               int64_t c = 16, int64_t hw = 8, int64_t k = 32, int64_t stride = 1) {
  GpuSpec::ConvScratchRecord r;
  r.pass = pass;
  r.dtype = "f32";
  r.layout = "nchw";
  r.c = c, r.h = hw, r.w = hw, r.k = k, r.r = 3, r.s = 3, r.stride_h = stride, r.stride_w = stride;
  r.pad_h = 1, r.pad_w = 1;
  r.by_batch = std::move(by_batch);
  s.conv_scratch[conv_scratch_key(pass, "f32", "nchw", c, hw, hw, k, 3, 3, stride, stride, 1, 1, 1, 1)] = r;
}

GpuSpec conv_scratch_read(const std::string& yaml) {
  GpuSpec s;
  read_conv_scratch(YamlMap(parse_yaml_text(yaml, "hw.yaml"), "hw.yaml"), s);
  return s;
}

const char* kConvScratchEntry =
    "conv_scratch:\n"
    "  - {pass: wgrad, dtype: f32, layout: nchw, n: 32, c: 16, h: 8, w: 8, k: 32, r: 3, s: 3, stride_h: 1,"
    " stride_w: 1, pad_h: 1, pad_w: 1, dilation: 1, groups: 1, bytes: 70000}\n";
}  // namespace

TEST_CASE("conv_scratch keys: the same geometry from an op and from a file's entry") {
  const Graph g = conv_scratch_graph(32, true);
  const char* passes[] = {"fwd", "dgrad", "wgrad"};
  for (size_t i = 0; i < 3; ++i) {
    const auto k = conv_scratch_key_of_op(g, g.op(static_cast<OpId>(i)));
    REQUIRE(k);
    CHECK(k->key == conv_scratch_test_key(passes[i]));
    CHECK(k->batch == 32);
  }
  const GpuSpec s = conv_scratch_read(kConvScratchEntry);
  REQUIRE(s.conv_scratch.count(conv_scratch_test_key("wgrad")) == 1);
  const GpuSpec::ConvScratchRecord& r = s.conv_scratch.at(conv_scratch_test_key("wgrad"));
  CHECK(r.by_batch == std::vector<std::pair<int64_t, uint64_t>>{{32, 70000}});
  CHECK((r.pass == "wgrad" && r.c == 16 && r.h == 8 && r.k == 32 && r.r == 3 && r.pad_w == 1 && r.groups == 1));
}

TEST_CASE("conv_scratch: without entries nothing changes, with them workspaces are resized, added, scaled") {
  GpuSpec s = testing::round_spec();
  Graph zoo = conv_scratch_graph(32, true);
  const size_t tensors = zoo.tensors().size();
  CHECK(apply_conv_scratch(zoo, s).sized == 0);
  CHECK(zoo.tensors().size() == tensors);
  for (const Op& o : zoo.ops()) CHECK(zoo.tensor(o.workspace).bytes == 1000);

  put_entry(s, "fwd", {{32, 4096}});
  put_entry(s, "wgrad", {{16, 1000}, {32, 70000}});
  put_entry(s, "dgrad", {{32, 0}});
  // The zoo's graph: each measured pass's tensor resized (a measured 0 to 0 bytes).
  const ConvScratchCoverage cz = apply_conv_scratch(zoo, s);
  CHECK(cz.convolutions == 3);
  CHECK(cz.sized == 3);
  CHECK(zoo.tensors().size() == tensors);
  CHECK(zoo.tensor(zoo.op(0).workspace).bytes == 4096);
  CHECK(zoo.tensor(zoo.op(1).workspace).bytes == 0);
  CHECK(zoo.tensor(zoo.op(2).workspace).bytes == 70144);  // 70000 rounded up to 512 B

  // A recorded step's graph has no workspace tensors: the measured ones are added (none for a measured 0).
  Graph traced = conv_scratch_graph(48, false);
  const size_t before = traced.tensors().size();
  CHECK(apply_conv_scratch(traced, s).sized == 3);
  CHECK(traced.tensors().size() == before + 2);
  REQUIRE(traced.op(0).workspace != kNoTensor);
  CHECK(traced.tensor(traced.op(0).workspace).bytes == 6144);  // 4096 * 48 / 32
  CHECK(traced.tensor(traced.op(0).workspace).kind == TensorKind::Workspace);
  CHECK(traced.op(1).workspace == kNoTensor);
  CHECK(traced.tensor(traced.op(2).workspace).bytes == 105472);  // nearest batch 32: 70000 * 48 / 32, to 512 B

  // Another geometry's entry leaves the op as it was.
  GpuSpec other = testing::round_spec();
  put_entry(other, "fwd", {{32, 1}}, 16, 8, 32, 2);
  Graph g = conv_scratch_graph(32, false);
  CHECK(apply_conv_scratch(g, other).sized == 0);
  for (const Op& o : g.ops()) CHECK(o.workspace == kNoTensor);
}

TEST_CASE("conv_scratch: a geometry nobody probed takes the median of its nearest neighbours' entries, scaled") {
  GpuSpec s = testing::round_spec();
  // Forward entries of the test convolution's kind (3x3, stride 1, dense, aligned) at log2 distances 1 (16 -> 64
  // channels on 8x8), 2 (16 -> 128) and 4 (16 -> 32 on 32x32); a wgrad entry only of stride 2.
  put_entry(s, "fwd", {{32, 100000}}, 16, 8, 64);
  put_entry(s, "fwd", {{32, 900000}}, 16, 8, 128);
  put_entry(s, "fwd", {{32, 5}}, 16, 32, 32);
  put_entry(s, "wgrad", {{32, 7}}, 16, 8, 32, 2);
  Graph traced = conv_scratch_graph(32, false);
  const ConvSizes z = *conv_sizes_of_op(traced, traced.op(0));
  const auto near = conv_scratch_nearest(s, "fwd", z, *conv_scratch_key_of_op(traced, traced.op(0)), 3);
  REQUIRE(near.size() == 3);
  CHECK((near[0]->k == 64 && near[1]->k == 128 && near[2]->h == 32));
  // Each scaled by input + output + filter elements: the 16 -> 64 one by (32 * (16*64 + 32*64) + 32*16*9) /
  // (32 * (16*64 + 64*64) + 64*16*9) = 102912 / 172032, 59821.4 B, rounded up to 512 B; the median of the three.
  CHECK(conv_scratch_scaled(*near[0], z, 32) == 59904);
  const ConvScratchCoverage c = apply_conv_scratch(traced, s);
  CHECK(c.sized == 0);
  CHECK(c.estimated == 1);  // the forward; no backward entry is of the same stride
  REQUIRE(traced.op(0).workspace != kNoTensor);
  CHECK(traced.tensor(traced.op(0).workspace).bytes == 59904);  // the middle of 512 (from 5 B), 59904 and more
  CHECK(traced.op(1).workspace == kNoTensor);
  CHECK(traced.op(2).workspace == kNoTensor);
  // Fewer neighbours of its kind than asked: none taken (the stride-2 weight gradient's one entry, above).
  s.conv_scratch_neighbours = 4;
  Graph four = conv_scratch_graph(32, true);
  CHECK(apply_conv_scratch(four, s).estimated == 0);
  CHECK(four.tensor(four.op(0).workspace).bytes == 1000);
  // One neighbour: the nearest one's; none: the op keeps what it had.
  s.conv_scratch_neighbours = 1;
  Graph one = conv_scratch_graph(32, false);
  apply_conv_scratch(one, s);
  CHECK(one.tensor(one.op(0).workspace).bytes == 59904);
  s.conv_scratch_neighbours = 0;
  Graph none = conv_scratch_graph(32, true);
  CHECK(apply_conv_scratch(none, s).estimated == 0);
  CHECK(none.tensor(none.op(0).workspace).bytes == 1000);
  s.conv_scratch_neighbours = 3;
  // An entry of the op's own geometry always wins over its neighbours'.
  put_entry(s, "fwd", {{32, 512}});
  Graph own = conv_scratch_graph(32, false);
  CHECK(apply_conv_scratch(own, s).sized == 1);
  CHECK(own.tensor(own.op(0).workspace).bytes == 512);
  // A depthwise convolution is not served by dense entries, nor a first layer's 3 channels (not 16-byte aligned)
  // by aligned ones; a grouped one is, when there is no grouped entry.
  auto key_of = [](const ConvSizes& q) {
    return ConvScratchKey{conv_scratch_key("fwd", "f32", "nchw", q.c, q.h, q.w, q.k, q.r, q.s, q.stride_h, q.stride_w,
                                           q.pad_h, q.pad_w, q.dilation, q.groups),
                          q.n, "f32", "nchw"};
  };
  ConvSizes q = z;
  q.k = 16, q.groups = 16;
  CHECK(conv_scratch_nearest(s, "fwd", q, key_of(q), 3).empty());
  q = z;
  q.c = 3;
  CHECK(conv_scratch_nearest(s, "fwd", q, key_of(q), 3).empty());
  q = z;
  q.groups = 2;
  CHECK(conv_scratch_nearest(s, "fwd", q, key_of(q), 3).size() == 3);
}

TEST_CASE("conv_scratch: a convolution_backward asked for both gradients: the pair's entry on the weight gradient") {
  GpuSpec s = testing::round_spec();
  put_entry(s, "dgrad", {{32, 50000}});
  put_entry(s, "wgrad", {{32, 70000}});
  put_entry(s, "bwd", {{32, 60000}, {64, 9000}});

  // Both gradients: the weight gradient's op (the second) carries the call's measured peak; the data gradient's
  // keeps its own entry, the call's peak plus dW's bytes at most (here 50000 < 60000 + 18432).
  Graph zoo = conv_scratch_graph(32, true);
  CHECK(conv_backward_partner(zoo) == std::vector<OpId>{-1, 2, 1});
  CHECK(apply_conv_scratch(zoo, s).sized == 2);  // the forward has no entry
  CHECK(zoo.tensor(zoo.op(0).workspace).bytes == 1000);
  CHECK(zoo.tensor(zoo.op(1).workspace).bytes == 50176);  // 50000 to 512 B
  CHECK(zoo.tensor(zoo.op(2).workspace).bytes == 60416);  // 60000 to 512 B, not the wgrad entry's 70000
  // A recorded step at the batch of the second bwd entry: that entry, unscaled; the dgrad entry scaled from 32 to
  // 64 (100352 B) exceeds the call's peak plus dW (9216 + 18432 B): capped there.
  Graph traced = conv_scratch_graph(64, false);
  apply_conv_scratch(traced, s);
  REQUIRE(traced.op(1).workspace != kNoTensor);
  CHECK(traced.tensor(traced.op(1).workspace).bytes == 9216 + 18432);
  REQUIRE(traced.op(2).workspace != kNoTensor);
  CHECK(traced.tensor(traced.op(2).workspace).bytes == 9216);  // 9000 to 512 B, not 60000 * 2
  // Without a dgrad entry the pair's data gradient asks none (the zoo's rule-sized tensor is emptied).
  s.conv_scratch.erase(conv_scratch_test_key("dgrad"));
  Graph no_dgrad = conv_scratch_graph(32, true);
  apply_conv_scratch(no_dgrad, s);
  CHECK(no_dgrad.tensor(no_dgrad.op(1).workspace).bytes == 0);

  // The first layer asks for the weight's gradient alone: its one-gradient entry when there is one...
  Graph first = conv_scratch_graph(32, false, false);
  CHECK(conv_backward_partner(first) == std::vector<OpId>{-1, -1});
  CHECK(apply_conv_scratch(first, s).sized == 1);
  CHECK(first.tensor(first.op(1).workspace).bytes == 70144);
  // ... else the pair's.
  s.conv_scratch.erase(conv_scratch_test_key("wgrad"));
  Graph first_bwd = conv_scratch_graph(32, false, false);
  apply_conv_scratch(first_bwd, s);
  CHECK(first_bwd.tensor(first_bwd.op(1).workspace).bytes == 60416);

  // Without a bwd entry each pass keeps its own (the file's pre-pair behaviour).
  s.conv_scratch.erase(conv_scratch_test_key("bwd"));
  put_entry(s, "dgrad", {{32, 50000}});
  put_entry(s, "wgrad", {{32, 70000}});
  Graph per_pass = conv_scratch_graph(32, false);
  apply_conv_scratch(per_pass, s);
  CHECK(per_pass.tensor(per_pass.op(1).workspace).bytes == 50176);
  CHECK(per_pass.tensor(per_pass.op(2).workspace).bytes == 70144);

  // The read side: a bwd entry is keyed with pass bwd.
  std::string e = kConvScratchEntry;
  const GpuSpec r = conv_scratch_read(e.replace(e.find("wgrad"), 5, "bwd"));
  CHECK(r.conv_scratch.count(conv_scratch_test_key("bwd")) == 1);
}

TEST_CASE("conv_scratch: a bad entry is an error naming the file and the field") {
  auto fails_with = [](const std::string& yaml, const std::string& what) {
    try {
      conv_scratch_read(yaml);
      FAIL("no error for " << yaml);
    } catch (const ConfigError& e) {
      const std::string m = e.what();
      CHECK(m.find("hw.yaml") != std::string::npos);
      CHECK(m.find(what) != std::string::npos);
    }
  };
  std::string e = kConvScratchEntry;
  fails_with("conv_scratch: 3\n", "expected a list");
  fails_with(std::string(e).replace(e.find("wgrad"), 5, "both"), "must be one of bwd, dgrad, fwd, wgrad");
  fails_with(std::string(e).replace(e.find("f32"), 3, "f64"), "dtype");
  fails_with(std::string(e).replace(e.find("n: 32"), 5, "n: 0"), "conv_scratch[0].n");
  fails_with("conv_scratch_neighbours: -1\n", "conv_scratch_neighbours");
  fails_with("conv_scratch_neighbours: many\n", "conv_scratch_neighbours");
  CHECK(conv_scratch_read("conv_scratch_neighbours: 5\n").conv_scratch_neighbours == 5);
  fails_with(std::string(e).replace(e.find("bytes: 70000"), 12, "bytes: -1"), "bytes");
  fails_with(std::string(e).replace(e.find("groups"), 6, "group"), "group");
  fails_with(e + e.substr(e.find("  -")), "a second entry");
}
