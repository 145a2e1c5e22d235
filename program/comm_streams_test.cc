// Where lowering puts collectives (program/comm_streams.h): a graph without one keeps its schedule as it is (so
// every single-GPU program is unchanged), and each tag present gets a stream after the compute streams.
#include "program/comm_streams.h"

#include <catch2/catch.hpp>

using namespace dlsim;

namespace {

OpId add(Graph& g, OpKind kind, int64_t tag = -1) {
  Op o;
  o.name = "op" + std::to_string(g.ops().size());
  o.kind = kind;
  if (tag >= 0) {
    o.set_attr(Attr::message_bytes, 1024);
    o.set_attr(Attr::ranks, 2);
    o.set_attr(Attr::comm_stream, tag);
  }
  return g.add_op(o);
}

}  // namespace

TEST_CASE("comm streams: a graph without collectives keeps its schedule") {
  Graph g;
  add(g, OpKind::Relu);
  add(g, OpKind::Add);
  Schedule s = serial_schedule_of(g);
  s.stream_of = {0, 1};
  s.num_streams = 2;
  CHECK_FALSE(has_collectives(g));
  const Schedule out = with_comm_streams(g, s);
  CHECK(out.num_streams == 2);
  CHECK(out.stream_of == s.stream_of);
}

TEST_CASE("comm streams: one stream per tag, in tag order, after the compute streams") {
  Graph g;
  add(g, OpKind::Relu);
  const OpId a = add(g, OpKind::AllReduce, 5);
  const OpId b = add(g, OpKind::ReduceScatter, 2);
  const OpId c = add(g, OpKind::AllGather, 5);
  add(g, OpKind::Add);
  Schedule s = serial_schedule_of(g);
  s.num_streams = 2;
  s.stream_of = {0, 1, 1, 0, 1};  // a policy's choice for the collectives is overridden
  REQUIRE(has_collectives(g));
  const Schedule out = with_comm_streams(g, s);
  CHECK(out.num_streams == 4);
  CHECK(out.stream_of[static_cast<size_t>(b)] == 2);  // tag 2
  CHECK(out.stream_of[static_cast<size_t>(a)] == 3);  // tag 5
  CHECK(out.stream_of[static_cast<size_t>(c)] == 3);
  CHECK(out.stream_of[0] == 0);
  CHECK(out.stream_of[4] == 1);
  CHECK(out.order == s.order);
}
