#include "hw/pcie_link.h"

#include <catch2/catch.hpp>

#include <stdexcept>

#include "hw/hardware.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
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

TEST_CASE("the shipped H100 link times known sizes exactly") {
  Hardware h = load_hardware("h100-sxm");
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
