#include "validate/gpu/program_file.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <utility>

#include "common/config_error.h"

using namespace dlsim;

namespace {

ProgramFile small_plan() {
  ProgramFile p;
  p.experiment = "exp.yaml";
  p.hw = "h100-sxm";
  p.capacity_bytes = 1 << 30;
  p.total_global_mem_bytes = (1 << 30) + (256 << 20);
  p.pool = "cnmem";
  p.pool_params.set("init_size_mb", int64_t{256});
  p.pool_params.set("grow", true);
  p.graph.name = "tiny";
  p.graph.batch = 2;
  // Two tensors built apart: reassigning one Tensor's name trips GCC 12's false -Wrestrict (GCC bug 105329).
  auto tensor = [](std::string name, TensorKind kind) {
    Tensor t;
    t.name = std::move(name);
    t.shape = {2, 3};
    t.bytes = 24;
    t.kind = kind;
    return t;
  };
  p.graph.add_tensor(tensor("x", TensorKind::Input));
  Tensor y = tensor("y", TensorKind::Activation);
  y.dtype = DType::BF16;
  y.persistent = true;
  p.graph.add_tensor(y);
  Op o;
  o.name = "relu";
  o.kind = OpKind::Relu;
  o.phase = Phase::Backward;
  o.inputs = {0};
  o.outputs = {1};
  o.set_attr(Attr::inplace, 1);
  o.flops = 6;
  p.graph.add_op(o);
  p.program.num_streams = 2;
  p.program.num_events = 1;
  p.program.setup = {{CmdKind::Alloc, 0, -1, 0, -1}};
  p.program.iteration = {{CmdKind::Alloc, 0, -1, 1, -1}, {CmdKind::Launch, 0, 0, -1, -1},
                         {CmdKind::RecordEvent, 0, -1, -1, 0}, {CmdKind::WaitEvent, 1, -1, -1, 0},
                         {CmdKind::CopyOut, 1, -1, 1, -1}, {CmdKind::Free, 0, -1, 1, -1}};
  p.program.teardown = {{CmdKind::Free, 0, -1, 0, -1}};
  return p;
}

}  // namespace

TEST_CASE("plan file: the Graph, the Program and the pool survive a JSON round trip unchanged") {
  const ProgramFile p = small_plan();
  const nlohmann::json j = program_file_to_json(p);
  const ProgramFile q = program_file_from_json(j, "plan.json");
  CHECK(program_file_to_json(q) == j);
  CHECK(q.pool_params.get_int("init_size_mb") == 256);
  CHECK(q.total_global_mem_bytes == (1 << 30) + (256 << 20));
  CHECK(q.pool_params.get_bool("grow"));
  CHECK(q.graph.tensor(1).dtype == DType::BF16);
  CHECK(q.graph.tensor(1).persistent);
  CHECK(q.graph.op(0).phase == Phase::Backward);
  CHECK(q.graph.op(0).attr(Attr::inplace) == 1);
  CHECK(q.program.iteration[3].kind == CmdKind::WaitEvent);
  CHECK(q.program.iteration[3].stream == 1);
  CHECK(q.graph.tensor(0).grad_of == kNoTensor);
}

TEST_CASE("plan file: the fingerprint names the ops a run launches, not the hardware it was planned for") {
  const ProgramFile p = small_plan();
  const std::string f = program_fingerprint(p);
  CHECK(f.size() == 16);
  CHECK(program_fingerprint(program_file_from_json(program_file_to_json(p), "plan.json")) == f);  // read back
  ProgramFile other_hw = small_plan();  // the simulated twin under another hardware file
  other_hw.hw = "a100-sxm-80gb";
  other_hw.capacity_bytes = 2u << 30;
  other_hw.experiment = "elsewhere.yaml";
  other_hw.warmup = 7;
  CHECK(program_fingerprint(other_hw) == f);
  ProgramFile renamed = small_plan();
  renamed.graph.op(0).name = "relu2";
  CHECK(program_fingerprint(renamed) != f);
  ProgramFile twice = small_plan();  // one more launch per iteration (a recomputation)
  twice.program.iteration.push_back({CmdKind::Launch, 0, 0, -1, -1});
  CHECK(program_fingerprint(twice) != f);
  ProgramFile moved = small_plan();  // the launch on another stream
  moved.program.iteration[1].stream = 1;
  CHECK(program_fingerprint(moved) != f);
}

TEST_CASE("plan file: a gradient keeps what it is the gradient of, and a plan without the field still reads") {
  ProgramFile p = small_plan();
  p.graph.tensor(1).kind = TensorKind::Gradient;
  p.graph.tensor(1).grad_of = 0;
  nlohmann::json j = program_file_to_json(p);
  CHECK(program_file_from_json(j, "plan.json").graph.tensor(1).grad_of == 0);
  j["graph"]["tensors"][1].erase("grad_of");  // as plans written before the field existed
  CHECK(program_file_from_json(j, "plan.json").graph.tensor(1).grad_of == kNoTensor);
  j["graph"]["tensors"][1]["grad_of"] = 99;
  CHECK_THROWS_WITH(program_file_from_json(j, "plan.json"), Catch::Contains("grad_of"));
}

TEST_CASE("plan file: bad fields are errors naming the field") {
  nlohmann::json j = program_file_to_json(small_plan());
  auto fails_with = [&](nlohmann::json bad, const std::string& key) {
    try {
      program_file_from_json(bad, "p.json");
      FAIL("expected ConfigError for " << key);
    } catch (const ConfigError& e) {
      CHECK(e.file() == "p.json");
      CHECK(e.key() == key);
    }
  };
  auto bad = j;
  bad["graph"]["ops"][0]["kind"] = "Convolution3000";
  fails_with(bad, "plan.graph.ops[0].kind");
  bad = j;
  bad["graph"]["ops"][0]["inputs"] = {7};
  fails_with(bad, "plan.graph.ops[0].inputs");
  bad = j;
  bad["program"]["iteration"][3]["stream"] = 5;
  fails_with(bad, "plan.program");
  bad = j;
  bad["capacity_bytes"] = "lots";
  fails_with(bad, "plan.capacity_bytes");
  bad = j;
  bad.erase("pool");
  fails_with(bad, "plan.pool");
}

TEST_CASE("plan file: a plan written before total_global_mem_bytes reads it as the capacity, one below it fails") {
  nlohmann::json j = program_file_to_json(small_plan());
  j.erase("total_global_mem_bytes");
  CHECK(program_file_from_json(j, "old.json").total_global_mem_bytes == 1 << 30);  // what that run's pool saw
  j["total_global_mem_bytes"] = 1024;
  CHECK_THROWS_WITH(program_file_from_json(j, "bad.json"), Catch::Contains("plan.total_global_mem_bytes"));
}

TEST_CASE("plan file: a number too large for any JSON number type is a ConfigError, not a crash") {
  // Found by fuzz/plan_json_fuzzer's sibling trace_json: nlohmann throws out_of_range (not parse_error) for 1e999,
  // and it escaped the loader.
  for (const std::string text : {"{\"capacity_bytes\": 1e999}", "[1E400]", "{\"warmup\": -1e99999}"}) {
    try {
      program_file_from_text(text, "p.json");
      FAIL("expected ConfigError for " << text);
    } catch (const ConfigError& e) {
      CHECK(e.file() == "p.json");
      CHECK(std::string(e.what()).find("not valid JSON") != std::string::npos);
    }
  }
}

TEST_CASE("plan file: op attributes read by their kind's declaration, an Other sub-kind as <name>: 1") {
  const nlohmann::json j = program_file_to_json(small_plan());  // op 0: a ReLU with inplace = 1
  auto fails_at = [](const nlohmann::json& bad, const std::string& key) {
    try {
      program_file_from_json(bad, "p.json");
      FAIL("expected ConfigError for " << key);
    } catch (const ConfigError& e) {
      CHECK(e.file() == "p.json");
      CHECK(e.key() == key);
    }
  };
  for (const char* undeclared : {"axis", "kh", "perm0", "nonsense"}) {
    nlohmann::json bad = j;
    bad["graph"]["ops"][0]["attrs"][undeclared] = 1;
    fails_at(bad, std::string("plan.graph.ops[0].attrs.") + undeclared);
  }
  nlohmann::json bad = j;
  bad["graph"]["ops"][0]["attrs"]["select"] = 1;  // a sub-kind on a ReLU
  fails_at(bad, "plan.graph.ops[0].attrs.select");
  // An LRN: kind Other, its sub-kind written as lrn: 1 beside its window, read back to the same text.
  nlohmann::json lrn = j;
  lrn["graph"]["ops"][0]["kind"] = "Other";
  lrn["graph"]["ops"][0]["attrs"] = {{"lrn", 1}, {"lrn_size", 5}};
  const ProgramFile p = program_file_from_json(lrn, "lrn.json");
  CHECK(p.graph.op(0).other == OtherOp::Lrn);
  CHECK(p.graph.op(0).attr(Attr::lrn_size) == 5);
  CHECK(program_file_to_json(p) == lrn);
  lrn["graph"]["ops"][0]["attrs"]["lrn"] = 2;
  fails_at(lrn, "plan.graph.ops[0].attrs.lrn");
}

TEST_CASE("plan file: a plan dlsim wrote before attributes were declared reads, and writes back, unchanged") {
  // SINGA's CIFAR AlexNet under cnmem (fuzz/corpus/plan_json): convolutions, pools, LRNs (Other, lrn: 1), ...
  const std::string path = std::string(DLSIM_SOURCE_DIR) + "/fuzz/corpus/plan_json/cifar-alexnet-b2-cnmem.json";
  std::ifstream in(path);
  REQUIRE(in);
  const nlohmann::json stored = nlohmann::json::parse(in);
  const ProgramFile p = read_program_file(path);
  size_t lrns = 0;
  for (const Op& op : p.graph.ops()) lrns += op.other == OtherOp::Lrn;
  CHECK(lrns > 0);
  CHECK(program_file_to_json(p)["graph"]["ops"] == stored["graph"]["ops"]);
}
