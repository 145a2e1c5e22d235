// Importing an ONNX file (parse, fold, build) and building a transformer must stay in milliseconds: the
// importer walks the nodes once, with map lookups per value.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "workloads/onnx_import.h"
#include "workloads/zoo.h"

namespace {

void BM_ImportOnnx(benchmark::State& state, const char* file) {
  if (!dlsim::onnx_import_available()) {
    state.SkipWithError("dlsim was built without ONNX support");
    return;
  }
  dlsim::ModelOptions o;
  o.batch = 32;
  // Run from the source root, or point DLSIM_SOURCE_DIR at it.
  const char* root = std::getenv("DLSIM_SOURCE_DIR");
  const std::string path = std::string(root ? root : ".") + "/workloads/testdata/onnx/" + file;
  if (!std::ifstream(path)) {
    state.SkipWithError(("cannot read " + path + "; run from the source root or set DLSIM_SOURCE_DIR").c_str());
    return;
  }
  for (auto _ : state) {
    dlsim::Graph g = dlsim::import_onnx_forward(path, o);
    benchmark::DoNotOptimize(g.ops().size());
  }
}
BENCHMARK_CAPTURE(BM_ImportOnnx, resnet152, "resnet152.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, gpt2_small, "gpt2-small.onnx")->Unit(benchmark::kMillisecond);

void BM_BuildTransformerTraining(benchmark::State& state, const char* model) {
  dlsim::ModelOptions o;
  o.batch = 8;
  for (auto _ : state) {
    dlsim::Graph g = dlsim::build_training_graph(model, o);
    benchmark::DoNotOptimize(g.ops().size());
  }
}
BENCHMARK_CAPTURE(BM_BuildTransformerTraining, bert_base, "bert-base")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildTransformerTraining, gpt2_small, "gpt2-small")->Unit(benchmark::kMillisecond);

}  // namespace
