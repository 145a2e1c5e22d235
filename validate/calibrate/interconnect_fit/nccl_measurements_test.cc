#include "validate/calibrate/interconnect_fit/nccl_measurements.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

using namespace dlsim;

namespace {

const std::string kNcclRow =
    R"({"collective": "all_reduce", "api": "tensor", "ranks": 2, "bytes": 1048576, "count": 262144,
        "time_us": 10.0, "time_us_min": 9.5, "time_us_max": 11, "algbw_gb_s": 104.8576, "busbw_gb_s": 104.8576,
        "iters": 20, "reps": 5})";

std::string nccl_doc(const std::string& rows, const std::string& top = R"("world_size": 2, "gpus_per_node": 2, "nodes": 1)") {
  return R"({"format": "dlsim-nccl-bandwidth", "version": 1, "backend": "nccl", "device": "cuda",
             "devices": ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"],
             "versions": {"nccl": "2.21.5", "torch": "2.5.1"}, "date": "2026-11-28T12:00:00Z", )" +
         top + R"(, "results": [)" + rows + "]}";
}

void nccl_check_refused(const std::string& text, const std::string& key, const std::string& message) {
  try {
    nccl_measurements_from_text(text, "bad-nccl.json");
    FAIL("accepted: " << text);
  } catch (const ConfigError& e) {
    INFO(e.what());
    CHECK(e.file() == "bad-nccl.json");
    CHECK(e.key() == key);
    CHECK_THAT(e.message(), Catch::Contains(message));
  }
}

std::string nccl_with(std::string row, const std::string& from, const std::string& to) {
  const size_t at = row.find(from);
  REQUIRE(at != std::string::npos);
  return row.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("an NCCL measurement loads with its machine and points") {
  const NcclMeasurements m = nccl_measurements_from_text(nccl_doc(kNcclRow), "m.json");
  CHECK(m.backend == "nccl");
  CHECK(m.world_size == 2);
  CHECK(m.gpus_per_node == 2);
  REQUIRE(m.points.size() == 1);
  CHECK(m.points[0].kind == CollectiveKind::AllReduce);
  CHECK(m.points[0].bytes == 1048576);
  CHECK(m.points[0].time_us == 10.0);
  CHECK(m.summary == "2 x NVIDIA H100 80GB HBM3, NCCL 2.21.5, torch 2.5.1, 2026-11-28T12:00:00Z");
}

TEST_CASE("a bad NCCL measurement names the file and the field") {
  nccl_check_refused("{\"format\": ", "", "not a JSON NCCL measurement");
  nccl_check_refused("[1]", "", "expected an object");
  nccl_check_refused(nccl_with(nccl_doc(kNcclRow), "dlsim-nccl-bandwidth", "dlsim-kernel-sweep"), "format", "must be dlsim-nccl-bandwidth");
  nccl_check_refused(nccl_with(nccl_doc(kNcclRow), "\"version\": 1", "\"version\": 2"), "version", "this dlsim reads 1");
  nccl_check_refused(nccl_with(nccl_doc(kNcclRow), "\"backend\": \"nccl\"", "\"backend\": \"mpi\""), "backend", "nccl or gloo");
  nccl_check_refused(nccl_with(nccl_doc(kNcclRow), "\"date\"", "\"hostname\": \"x\", \"date\""), "hostname", "unknown field");
  nccl_check_refused(nccl_doc(kNcclRow, R"("world_size": 4, "gpus_per_node": 2, "nodes": 1)"), "nodes", "are not the 4 ranks");
  nccl_check_refused(nccl_doc(""), "results", "is empty");
  nccl_check_refused(R"({"format": "dlsim-nccl-bandwidth", "version": 1, "backend": "nccl", "device": "cuda",
                    "world_size": 2, "gpus_per_node": 2, "nodes": 1, "results": 5})",
                "results", "must be an array");
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "all_reduce", "all_to_all")), "results[0].collective", "unknown collective");
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "\"ranks\": 2", "\"ranks\": 3")), "results[0].ranks", "must be in [2, 2]");
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "\"ranks\": 2", "\"ranks\": \"2\"")), "results[0].ranks", "must be an integer");
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "\"time_us\": 10.0", "\"time_us\": -1")), "results[0].time_us", "must be in (0");
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "\"time_us\": 10.0,", "")), "results[0].time_us", "missing");
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "\"iters\"", "\"note\": 1, \"iters\"")), "results[0].note", "unknown field");
  // time_us written in milliseconds: algbw no longer agrees with bytes / time
  nccl_check_refused(nccl_doc(nccl_with(kNcclRow, "\"time_us\": 10.0", "\"time_us\": 0.01")), "results[0].algbw_gb_s",
                "is not bytes / time_us");
}

TEST_CASE("a group of ranks that is not whole nodes is refused") {
  const std::string top = R"("world_size": 16, "gpus_per_node": 8, "nodes": 2)";
  const std::string twelve = nccl_with(nccl_with(kNcclRow, "\"ranks\": 2", "\"ranks\": 12"), "\"algbw_gb_s\": 104.8576, ", "");
  nccl_check_refused(nccl_doc(twelve, top), "results[0].ranks", "not whole nodes of 8");
  CHECK(nccl_measurements_from_text(nccl_doc(nccl_with(twelve, "\"ranks\": 12", "\"ranks\": 16"), top), "m.json")
            .points[0].ranks == 16);
}
