// PyTorch's engine choice (engine_choice.h) over scripted cuDNN answers: the filter, the order, the workspace
// limit, and the fallback list asked for only when the heuristics' configurations are all refused.
#include <catch2/catch.hpp>


#include "validate/gpu/engine_choice.h"

using namespace dlsim;

namespace {

// A scripted configuration: its notes, and what finalizing its plan gives.
struct Scripted {
  EngineOffer offer;
  bool finalizes = true;
  uint64_t workspace = 0;
};

struct Script {
  std::vector<Scripted> heuristics, fallback;
  std::vector<EngineSource> asked;                     // offers() calls, in order
  std::vector<std::pair<EngineSource, size_t>> built;  // try_plan() calls, in order

  EngineChoice run(const EngineChoicePolicy& p) {
    auto list = [&](EngineSource s) -> std::vector<Scripted>& {
      return s == EngineSource::Heuristics ? heuristics : fallback;
    };
    return choose_engine(
        p,
        [&](EngineSource s) {
          asked.push_back(s);
          std::vector<EngineOffer> o;
          for (const Scripted& c : list(s)) o.push_back(c.offer);
          return o;
        },
        [&](EngineSource s, size_t i) {
          built.emplace_back(s, i);
          const Scripted& c = list(s).at(i);
          return PlanAttempt{c.finalizes, c.finalizes ? c.workspace : 0, c.finalizes ? "" : "NOT_SUPPORTED"};
        });
  }
};

Scripted offer_of(const std::string& tag, uint64_t ws = 0) { return {{tag}, true, ws}; }

}  // namespace

TEST_CASE("engine choice: the first heuristic configuration that finalizes is taken, and nothing after it is built") {
  Script s;
  s.heuristics = {offer_of("eng1", 100), offer_of("eng2", 0)};
  s.fallback = {offer_of("eng0")};
  const EngineChoice c = s.run({});
  REQUIRE(c.choice() != nullptr);
  CHECK(c.choice()->tag == "eng1");
  CHECK(c.choice()->workspace == 100);
  CHECK(c.choice()->source == EngineSource::Heuristics);
  CHECK(c.trials.size() == 1);
  CHECK(s.built.size() == 1);
  CHECK(s.asked == std::vector<EngineSource>{EngineSource::Heuristics});  // the fallback list is never asked for
}

TEST_CASE("engine choice: PyTorch's filter drops down-converting engines always, tensor cores only when not allowed") {
  Script s;
  Scripted down = offer_of("eng3"), tc = offer_of("eng4"), plain = offer_of("eng5");
  down.offer.down_convert_inputs = true;
  tc.offer.tensor_core = true;
  s.heuristics = {down, tc, plain};

  SECTION("fp32 with TF32 (or 16-bit): the tensor-core engine is taken") {
    const EngineChoice c = s.run({});
    REQUIRE(c.choice() != nullptr);
    CHECK(c.choice()->tag == "eng4");
    CHECK(c.trials[0].verdict == EngineVerdict::DownConvertsInputs);
    CHECK(s.built == std::vector<std::pair<EngineSource, size_t>>{{EngineSource::Heuristics, 1}});
  }
  SECTION("fp32 without TF32: both are dropped before any plan is built") {
    EngineChoicePolicy p;
    p.allow_tensor_cores = false;
    const EngineChoice c = s.run(p);
    REQUIRE(c.choice() != nullptr);
    CHECK(c.choice()->tag == "eng5");
    CHECK(c.trials[1].verdict == EngineVerdict::TensorCoresNotAllowed);
    CHECK(s.built == std::vector<std::pair<EngineSource, size_t>>{{EngineSource::Heuristics, 2}});
  }
}

TEST_CASE("engine choice: nondeterministic engines are dropped only when determinism is asked for") {
  Script s;
  Scripted nd = offer_of("eng6");
  nd.offer.nondeterministic = true;
  s.heuristics = {nd, offer_of("eng7")};
  CHECK(s.run({}).choice()->tag == "eng6");
  EngineChoicePolicy p;
  p.deterministic = true;
  const EngineChoice c = s.run(p);
  CHECK(c.choice()->tag == "eng7");
  CHECK(c.trials[0].verdict == EngineVerdict::Nondeterministic);
}

TEST_CASE("engine choice: plans that do not finalize or want too much workspace are passed over, in order") {
  Script s;
  Scripted unsupported = offer_of("eng8");
  unsupported.finalizes = false;
  s.heuristics = {unsupported, offer_of("eng9", 4096), offer_of("eng10", 1024), offer_of("eng11", 0)};
  EngineChoicePolicy p;
  p.workspace_limit = 2048;
  const EngineChoice c = s.run(p);
  REQUIRE(c.choice() != nullptr);
  CHECK(c.choice()->tag == "eng10");
  REQUIRE(c.trials.size() == 3);
  CHECK(c.trials[0].verdict == EngineVerdict::NotSupported);
  CHECK(c.trials[0].detail == "NOT_SUPPORTED");
  CHECK(c.trials[1].verdict == EngineVerdict::WorkspaceTooLarge);
  CHECK(c.trials[1].workspace == 4096);
  // A workspace equal to the limit fits (the graph's workspace tensor holds exactly that many bytes).
  p.workspace_limit = 4096;
  CHECK(s.run(p).choice()->tag == "eng9");
}

TEST_CASE("engine choice: the fallback list is tried only after every heuristic configuration is refused") {
  Script s;
  Scripted tc = offer_of("eng12");
  tc.offer.tensor_core = true;
  s.heuristics = {tc, offer_of("eng13", 1 << 20)};
  s.fallback = {offer_of("eng14", 1 << 21), offer_of("eng0", 0)};
  EngineChoicePolicy p;
  p.allow_tensor_cores = false;
  p.workspace_limit = 1 << 10;
  const EngineChoice c = s.run(p);
  REQUIRE(c.choice() != nullptr);
  CHECK(c.choice()->tag == "eng0");
  CHECK(c.choice()->source == EngineSource::Fallback);
  CHECK(s.asked == std::vector<EngineSource>{EngineSource::Heuristics, EngineSource::Fallback});
  CHECK(c.trials.size() == 4);
  CHECK(std::string(to_string(c.trials[2].verdict)) == "workspace-too-large");
}

TEST_CASE("engine choice: nothing taken leaves no choice and every trial recorded") {
  Script s;
  Scripted down = offer_of("eng15");
  down.offer.down_convert_inputs = true;
  s.heuristics = {down};
  const EngineChoice c = s.run({});
  CHECK(c.choice() == nullptr);
  CHECK_FALSE(c.chosen.has_value());
  REQUIRE(c.trials.size() == 1);
  CHECK(c.trials[0].tag == "eng15");
  CHECK(s.asked.size() == 2);
}
