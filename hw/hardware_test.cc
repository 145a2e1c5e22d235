#include "hw/hardware.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "hw/fitted/fitted_cost_model.h"
#include "hw/roofline.h"
#include "hw/table_cost_model.h"
#include "hw/testing/fixtures.h"
#include "hw/gpu_spec_file.h"

using namespace dlsim;

TEST_CASE("load_hardware builds the spec, a roofline model and the PCIe link for every shipped GPU") {
  for (const auto& name : list_hw_names()) {
    INFO(name);
    Hardware h = load_hardware(name);
    CHECK(h.spec.name == name);
    REQUIRE(h.kernels != nullptr);
    REQUIRE(h.link != nullptr);
    // h100-sxm-harness is calibrated on the harness's runs (measured kernel times: the table model); the H100 and
    // H200 defaults, their -fitted bases and the h100-sxm-pytorch alias carry kernel times fitted to PyTorch-level
    // data (the fitted model); the others are datasheet models.
    const bool fitted = name == "h100-sxm" || name == "h100-sxm-fitted" || name == "h100-sxm-pytorch" ||
                        name == "h200-fitted" || name == "h200";
    if (name == "h100-sxm-harness") CHECK(dynamic_cast<TableCostModel*>(h.kernels.get()) != nullptr);
    else if (fitted) CHECK(dynamic_cast<FittedCostModel*>(h.kernels.get()) != nullptr);
    else CHECK(dynamic_cast<RooflineCostModel*>(h.kernels.get()) != nullptr);
    CHECK(h.link->bandwidth(CopyDir::HostToDevice, true) == h.spec.pcie_h2d_pinned);
  }
}

TEST_CASE("a hardware file with kernel_times gets the table model, and the model survives moving Hardware") {
  std::string text;
  {
    std::ifstream in(resolve_hw_path("a100-sxm-40gb"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  testing::TempFile f("calibrated.yaml", text + "kernel_times:\n  - {signature: \"ZeroGrad in= out= attrs=\", ns: 777}\n");
  Hardware h = load_hardware(f.path());
  Hardware moved = std::move(h);
  auto* table = dynamic_cast<TableCostModel*>(moved.kernels.get());
  REQUIRE(table != nullptr);
  Graph g;
  Op o;
  o.kind = OpKind::ZeroGrad;
  OpId id = g.add_op(o);
  CHECK(moved.kernels->cost(g, g.op(id)).duration_ns == 777);
}

TEST_CASE("load_hardware reports an unknown name as a ConfigError") {
  CHECK_THROWS_AS(load_hardware("gtx-480"), ConfigError);
}
