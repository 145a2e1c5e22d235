#include "hw/pcie_link.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

#include "hw/hardware.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;

namespace {
struct MicrobenchFile {  // the micro-benchmark JSON as dlsim-cuda wrote it
  nlohmann::json json;
  explicit MicrobenchFile(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in);
    json = nlohmann::json::parse(in);
  }
};
}  // namespace
using namespace dlsim::testing;

TEST_CASE("copy time is latency plus bytes over the rate of the direction and host-memory kind") {
  PcieLink link(round_spec());  // H2D 25 / 10 GB/s, D2H 20 / 8 GB/s (pinned / pageable), 20 µs latency
  CHECK(link.copy_time(CopyDir::HostToDevice, 1'000'000'000, true) == 20'000 + 40'000'000);
  CHECK(link.copy_time(CopyDir::DeviceToHost, 1'000'000'000, true) == 20'000 + 50'000'000);
  CHECK(link.copy_time(CopyDir::HostToDevice, 1'000'000'000, false) == 20'000 + 100'000'000);
  CHECK(link.copy_time(CopyDir::DeviceToHost, 1'000'000'000, false) == 20'000 + 125'000'000);
  CHECK(link.copy_time(CopyDir::HostToDevice, 1, true) == 20'000);  // 0.04 ns rounds to 0
  CHECK(link.copy_time(CopyDir::HostToDevice, 0, true) == 0);       // no transfer at all
  CHECK(link.bandwidth(CopyDir::DeviceToHost, false) == 8e9);
  CHECK(link.latency(CopyDir::HostToDevice) == 20'000);
}

TEST_CASE("the datasheet H100 link times known sizes exactly") {
  Hardware h = load_hardware("h100-sxm-datasheet");
  // 1 GiB at 55.6 GB/s = 19,311,903.3 ns, + 20 µs.
  CHECK(h.link->copy_time(CopyDir::HostToDevice, uint64_t{1} << 30, true) == 19'311'903 + 20'000);
  // 1 MiB pageable at 27.8 GB/s = 37,718.6 ns, + 20 µs.
  CHECK(h.link->copy_time(CopyDir::DeviceToHost, uint64_t{1} << 20, false) == 37'719 + 20'000);
}

TEST_CASE("a hand-built spec with a zero rate is refused rather than dividing by zero") {
  GpuSpec s = round_spec();
  s.pcie_d2h_pageable = 0;
  CHECK_THROWS_AS(PcieLink(s), std::invalid_argument);
}

TEST_CASE("the calibrated H100 link reproduces the copies measured on a real H100") {
  // results/validation/h100-sxm/micro.json: pinned copies alone, 4 KiB to 1 GiB each way. One latency serves both
  // directions, so small copies are off by up to 20 %; from 1 MiB up the fit is within 2.5 %.
  const Hardware h = load_hardware("h100-sxm");
  const MicrobenchFile m(std::string(DLSIM_SOURCE_DIR) + "/results/validation/h100-sxm/micro.json");
  int checked = 0;
  for (const auto& c : m.json["copies"]) {
    if (!c["pinned"].get<bool>() || c["bidirectional"].get<bool>()) continue;
    const uint64_t bytes = c["bytes"].get<uint64_t>();
    const CopyDir dir = c["dir"] == "h2d" ? CopyDir::HostToDevice : CopyDir::DeviceToHost;
    const double measured = c["ns"].get<double>();
    const double model = static_cast<double>(h.link->copy_time(dir, bytes, true));
    INFO(c.dump());
    CHECK(std::abs(model - measured) / measured < (bytes >= (1u << 20) ? 0.025 : 0.20));
    ++checked;
  }
  CHECK(checked == 20);
}

TEST_CASE("a link with a latency per direction times SINGA's fitted copies") {
  // configs/hw/titan-x-pcie3.yaml holds SINGA's lines: out 0.0756 ns/B + 47.2 us, in 0.0823 ns/B + 9.7 us.
  const Hardware h = load_hardware("titan-x-pcie3");
  CHECK(h.link->latency(CopyDir::DeviceToHost) == 47'200);
  CHECK(h.link->latency(CopyDir::HostToDevice) == 9'700);
  // 1 MiB: SINGA's notes give 126.5 us out and 96.0 us in
  CHECK(h.link->copy_time(CopyDir::DeviceToHost, uint64_t{1} << 20, true) == Approx(126'470).margin(30));
  CHECK(h.link->copy_time(CopyDir::HostToDevice, uint64_t{1} << 20, true) == Approx(95'997).margin(30));
  GpuSpec one = round_spec();  // without the per-direction keys both directions take latency_us
  CHECK(PcieLink(one).latency(CopyDir::DeviceToHost) == PcieLink(one).latency(CopyDir::HostToDevice));
}
