#include <catch2/catch.hpp>

#include "policies/planners/planner.h"
#include "policies/pool/cnmem_pool.h"
#include "policies/pool/pool_policy.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/smartpool.h"
#include "policies/pool/tf_bfc_pool.h"

using namespace dlsim;

TEST_CASE("every pool parameter's default passes its own check", "[pool][params]") {
  for (const auto& e : pool_registry().entries()) {
    INFO(e.name);
    CHECK_NOTHROW(check_params(e.params, Params(e.params), e.name));
  }
}

// The options structs keep C++ defaults so that code and tests can build a pool without Params; they must be the
// declared defaults converted, or a pool built in code would differ from the same pool named in a file.
TEST_CASE("the options structs' defaults are the declared defaults", "[pool][params]") {
  CHECK(CnmemOptions::from_params(Params(CnmemOptions::specs())) == CnmemOptions{});
  CHECK(PytorchCachingOptions::from_params(Params(PytorchCachingOptions::specs())) == PytorchCachingOptions{});
  CHECK(TfBfcOptions::from_params(Params(TfBfcOptions::specs())) == TfBfcOptions{});
  CHECK(SmartPoolOptions::from_params(Params(SmartPoolOptions::specs())) == SmartPoolOptions{});
}

TEST_CASE("the planned pool offers exactly the registered planners", "[pool][params]") {
  const auto& planned = pool_registry().get("planned");
  Params p(planned.params);
  for (const auto& name : planner_registry().names()) {
    p.set("planner", name);
    CHECK_NOTHROW(check_params(planned.params, p, "planned"));
  }
  p.set("planner", std::string("first-fit"));
  CHECK_THROWS_AS(check_params(planned.params, p, "planned"), ConfigError);
}
