// Fuzz target: a Hugging Face config.json of a Llama-family model (workloads/llama_models.h), as `model: x.json`
// in an experiment loads it. JSON is read as YAML, so YAML's anchors and aliases reach this loader too (issue 27).
#include "fuzz/fuzz_input.h"
#include "workloads/llama_models.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlsim::fuzz::run_loader([&] {
    dlsim::parse_llama_config(dlsim::fuzz::as_text(data, size), "fuzz-config.json");
  });
}
