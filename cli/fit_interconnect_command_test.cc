#include "cli/fit_interconnect_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "common/config_error.h"
#include "hw/hardware.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {

std::string ic_read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A measurement as nccl_bandwidth.py writes it, of 2 GPUs whose link the model prices with 15 us of base latency,
// 1.5 us a hop and 0.9 of 450 GB/s: the H100 file's rates with other latencies and efficiency.
nlohmann::json ic_synthetic(const std::string& backend, const std::string& device) {
  Interconnect truth;
  truth.base_latency_s = 15e-6;
  truth.intra = {450e9, 1.5e-6, 0.9};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [kind, name] : {std::pair{CollectiveKind::AllReduce, "all_reduce"},
                                   std::pair{CollectiveKind::AllGather, "all_gather"},
                                   std::pair{CollectiveKind::ReduceScatter, "reduce_scatter"}})
    for (uint64_t s = 8; s <= (uint64_t{1} << 28); s *= 4)
      rows.push_back({{"collective", name}, {"ranks", 2}, {"bytes", s},
                      {"time_us", collective_cost(truth, kind, s, 2, 2).time_s * 1e6}});
  return {{"format", "dlsim-nccl-bandwidth"}, {"version", 1}, {"backend", backend}, {"device", device},
          {"world_size", 2}, {"gpus_per_node", 2}, {"nodes", 1}, {"results", rows}};
}

struct IcTempDir {
  fs::path path = fs::temp_directory_path() / ("dlsim-fit-interconnect-" + std::to_string(::getpid()));
  IcTempDir() { fs::create_directories(path); }
  ~IcTempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("dlsim fit-interconnect writes a file on the base that prices collectives with the fitted link") {
  IcTempDir dir;
  const fs::path in = dir.path / "nccl.json";
  std::ofstream(in) << ic_synthetic("nccl", "cuda").dump(1);
  FitInterconnectCommandOptions o;
  o.nccl = in.string();
  o.hw = "h100-sxm";
  o.out = (dir.path / "h100-links.yaml").string();
  std::ostringstream out, err;
  REQUIRE(run_fit_interconnect_command(o, out, err) == 0);
  INFO(out.str());
  CHECK_THAT(out.str(), Catch::Contains("interconnect.intra_node.bus_efficiency: 0.82 -> 0.9\n"));
  CHECK_THAT(out.str(), Catch::Contains("interconnect.base_latency_us: 8.4 -> 15\n"));
  CHECK_THAT(out.str(), Catch::Contains("note: "));  // measured on nodes of 2, the file's are of 8
  const std::string text = ic_read_file(o.out);
  CHECK_THAT(text, Catch::Contains("\nbase: h100-sxm\n"));
  CHECK_THAT(text, Catch::Contains("interconnect:\n  base_latency_us: 15\n  intra_node:\n    latency_us: 1.5\n"
                                   "    bus_efficiency: 0.9\n"));
  CHECK(text.find("inter_node") == std::string::npos);  // nothing measured across nodes: the base's stays
  const Hardware hw = load_hardware(o.out);
  REQUIRE(hw.spec.interconnect);
  CHECK(hw.spec.interconnect->intra.bus_efficiency == Approx(0.9));
  CHECK(hw.spec.interconnect->intra.bytes_per_s == 450e9);       // the base's rate
  CHECK(hw.spec.interconnect->inter->latency_s == Approx(14e-6));  // the base's network
  CHECK(hw.spec.node->gpus_per_node == 8);
  // Rerun: the same bytes.
  std::ostringstream out2;
  REQUIRE(run_fit_interconnect_command(o, out2, err) == 0);
  CHECK(ic_read_file(o.out) == text);
}

TEST_CASE("dlsim fit-interconnect refuses a gloo/CPU run unless --allow-cpu, and a base without interconnect") {
  IcTempDir dir;
  const fs::path in = dir.path / "gloo.json";
  std::ofstream(in) << ic_synthetic("gloo", "cpu").dump(1);
  FitInterconnectCommandOptions o;
  o.nccl = in.string();
  o.hw = "h100-sxm";
  o.out = (dir.path / "never.yaml").string();
  std::ostringstream out, err;
  CHECK_THROWS_WITH(run_fit_interconnect_command(o, out, err),
                    Catch::Contains("gloo.json: 'backend': measured with gloo on the cpu, not NCCL on GPUs"));
  CHECK_FALSE(fs::exists(o.out));
  o.hw = "v100-sxm2-16gb";  // no node: or interconnect: section
  o.allow_cpu = true;
  CHECK_THROWS_WITH(run_fit_interconnect_command(o, out, err),
                    Catch::Contains("'interconnect': has no interconnect: section"));
  o.hw = "h100-sxm";
  CHECK(run_fit_interconnect_command(o, out, err) == 0);
  CHECK(fs::exists(o.out));
}
