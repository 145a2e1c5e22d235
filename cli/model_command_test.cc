// `dlsim model --swap`: the saved-bytes figures under a checkpointing policy, and its refusals; `--parallelism`.
#include "cli/model_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

#include "common/config_error.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {
nlohmann::json model_json(ModelCommandOptions o) {
  o.json = true;
  std::ostringstream out, err;
  REQUIRE(run_model_command(o, out, err) == 0);
  return nlohmann::json::parse(out.str());
}
ModelCommandOptions resnet18() {
  ModelCommandOptions o;
  o.model = "resnet18";
  o.batch = 2;
  return o;
}
}  // namespace

TEST_CASE("dlsim model --swap checkpoint reports less kept by the forward pass, and the backward peak") {
  const nlohmann::json none = model_json(resnet18());
  CHECK(none["swap"] == "none");
  CHECK(none["backward_peak_saved_bytes"] == none["saved_for_backward_bytes"]);
  ModelCommandOptions o = resnet18();
  o.swap = "checkpoint";
  o.params = {"every=2"};
  const nlohmann::json two = model_json(o);
  CHECK(two["swap"] == "checkpoint");
  const auto saved = two["saved_for_backward_bytes"].get<uint64_t>(), peak = two["backward_peak_saved_bytes"].get<uint64_t>();
  CHECK(saved < none["saved_for_backward_bytes"].get<uint64_t>() / 2);
  CHECK(peak >= saved);
  CHECK(peak < none["backward_peak_saved_bytes"].get<uint64_t>());
  o.swap = "sqrt";  // ResNet-18: 8 blocks, round(sqrt(8)) = 3 per segment
  o.params.clear();
  CHECK(model_json(o)["saved_for_backward_bytes"].get<uint64_t>() < none["saved_for_backward_bytes"].get<uint64_t>());
  // The text form prints both figures.
  o.json = false;
  std::ostringstream text, err;
  REQUIRE(run_model_command(o, text, err) == 0);
  CHECK_THAT(text.str(), Catch::Contains("swap sqrt") && Catch::Contains("backward peak of saved"));
}

TEST_CASE("dlsim model --swap refuses what it cannot account, naming the option") {
  ModelCommandOptions o = resnet18();
  std::ostringstream out, err;
  o.swap = "checkpoint";
  o.params = {"every=0"};
  CHECK_THROWS_WITH(run_model_command(o, out, err), Catch::Contains("every") && Catch::Contains(">= 1"));
  o.params = {"segments=0-3,9"};  // ResNet-18 has blocks 0..7
  CHECK_THROWS_WITH(run_model_command(o, out, err), Catch::Contains("segments") && Catch::Contains("block 9"));
  o.params = {"every"};
  CHECK_THROWS_WITH(run_model_command(o, out, err), Catch::Contains("--param") && Catch::Contains("KEY=VALUE"));
  o.params.clear();
  o.model = "vgg16";
  CHECK_THROWS_WITH(run_model_command(o, out, err), Catch::Contains("no block structure"));
  o.model = "resnet18";
  o.swap = "vdnn";
  CHECK_THROWS_WITH(run_model_command(o, out, err), Catch::Contains("--swap") && Catch::Contains("dlsim run"));
  o.swap = "no-such-policy";
  CHECK_THROWS_WITH(run_model_command(o, out, err), Catch::Contains("unknown swap policy"));
}

TEST_CASE("dlsim model --attention: flash keeps less than eager on a Llama model, unknown values name the option") {
  ModelCommandOptions o;
  o.model = "llama3.2-1b";
  o.batch = 1;
  o.seq_len = 256;
  const nlohmann::json flash = model_json(o);  // the default
  CHECK(flash["params"].get<uint64_t>() == 1235814400u);
  o.attention = "eager";
  const nlohmann::json eager = model_json(o);
  // 16 layers of (1, 32, 256, 256) fp32 probabilities instead of (1, 32, 256) fp32 log-sum-exps.
  CHECK(eager["saved_for_backward_bytes"].get<uint64_t>() - flash["saved_for_backward_bytes"].get<uint64_t>() ==
        16u * (32u * 256 * 256 * 4 - 32u * 256 * 4));
  o.attention = "flash";
  std::ostringstream out, err;
  try {
    run_model_command(o, out, err);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "--attention");
    CHECK_THAT(e.what(), Catch::Contains("eager, sdpa-flash"));
  }
}

TEST_CASE("model --parallelism: the width per stage, forward and backward") {
  ModelCommandOptions o;
  o.model = "googlenet";
  o.batch = 8;
  o.parallelism = true;
  o.json = true;
  std::ostringstream out, err;
  REQUIRE(run_model_command(o, out, err) == 0);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  CHECK(j["forward"]["max_width"] == 4);  // an Inception module's four branches
  CHECK(j["backward"]["max_width"].get<int>() > 4);  // mirrored branches, dgrad beside wgrad, updates
  CHECK(j["max_width"].get<int>() >= j["backward"]["max_width"].get<int>());
  // Every forward op that launches a kernel sits in exactly one stage.
  ModelOptions mo;
  mo.batch = 8;
  const Graph g = build_training_graph("googlenet", mo);
  int kernels = 0, counted = 0;
  for (const Op& op : g.ops())
    if (op.phase == Phase::Forward && (op.flops > 0 || op.bytes_read + op.bytes_written > 0)) ++kernels;
  for (int w : j["forward"]["widths"]) counted += w;
  CHECK(counted == kernels);
  CHECK(j["forward"]["stages"] == j["forward"]["widths"].size());
  // The text form says the same.
  o.json = false;
  std::ostringstream text;
  REQUIRE(run_model_command(o, text, err) == 0);
  CHECK_THAT(text.str(), Catch::Contains("training graph max width  " + std::to_string(j["max_width"].get<int>())));
}
