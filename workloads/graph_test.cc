#include "workloads/graph.h"

#include <catch2/catch.hpp>

using namespace dlsim;

namespace {
TensorId tensor(Graph& g, const std::string& n) {
  Tensor t;
  t.name = n;
  t.bytes = 4;
  return g.add_tensor(t);
}
OpId op(Graph& g, std::vector<TensorId> in, std::vector<TensorId> out) {
  Op o;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  return g.add_op(o);
}
bool has_edge(const Graph::Dag& d, OpId u, OpId v) {
  return boost::edge(static_cast<size_t>(u), static_cast<size_t>(v), d).second;
}
}  // namespace

TEST_CASE("dag has data and anti-dependence edges, none spurious") {
  Graph g;
  TensorId a = tensor(g, "a"), b = tensor(g, "b"), c = tensor(g, "c");
  OpId w = op(g, {}, {a});        // writes a
  OpId r1 = op(g, {a}, {b});      // reads a
  OpId r2 = op(g, {a}, {c});      // reads a, independent of r1
  OpId ip = op(g, {a}, {a});      // overwrites a in place: after both readers
  OpId last = op(g, {b, c}, {});  // joins
  Graph::Dag d = g.dag();
  CHECK(boost::num_vertices(d) == 5);
  CHECK(has_edge(d, w, r1));
  CHECK(has_edge(d, w, r2));
  CHECK_FALSE(has_edge(d, r1, r2));
  CHECK(has_edge(d, r1, ip));
  CHECK(has_edge(d, r2, ip));
  CHECK(has_edge(d, w, ip));
  CHECK(has_edge(d, r1, last));
  CHECK(has_edge(d, r2, last));
  CHECK_FALSE(has_edge(d, ip, ip));
  CHECK(boost::num_edges(d) == 7);
}

TEST_CASE("dtype sizes and names") {
  CHECK(dtype_bytes(DType::F32) == 4);
  CHECK(dtype_bytes(DType::BF16) == 2);
  CHECK(dtype_bytes(DType::I64) == 8);
  CHECK(dtype_bytes(DType::Bool) == 1);
  CHECK(std::string(to_string(OpKind::Conv2dBwdFilter)) == "Conv2dBwdFilter");
  CHECK(std::string(to_string(TensorKind::OptimizerState)) == "optimizer_state");
  CHECK(std::string(to_string(Phase::Backward)) == "backward");
}
