#include "validate/calibrate/kernel_fit/kernel_sweep.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

using namespace dlsim;

namespace {

const std::string kSweepTestFixture = std::string(DLSIM_SOURCE_DIR) + "/tests/data/kernel-sweep-h200-subset.json";

void check_refused(const std::string& text, const std::string& key, const std::string& message) {
  try {
    kernel_sweep_from_text(text, "bad-sweep.json");
    FAIL("accepted: " << text);
  } catch (const ConfigError& e) {
    INFO(e.what());
    CHECK(e.file() == "bad-sweep.json");
    CHECK(e.key() == key);
    CHECK_THAT(e.message(), Catch::Contains(message));
  }
}

std::string one(const std::string& record) { return R"({"meta": {}, "records": [)" + record + "]}"; }

const std::string kConv =
    R"("op": "conv_fwd", "n": 8, "c": 64, "h": 56, "w": 56, "k": 64, "r": 3, "s": 3, "stride": 1, "pad": 1, "groups": 1)";

}  // namespace

TEST_CASE("the committed H200 subset loads, every record with its fields") {
  const KernelSweep s = load_kernel_sweep(kSweepTestFixture);
  REQUIRE(s.records.size() == 338);
  CHECK(s.meta["device"] == "NVIDIA H200");
  size_t convs = 0, sdpa = 0;
  for (const SweepRecord& r : s.records) {
    CHECK(r.us > 0);
    CHECK(r.us_min <= r.us);
    convs += is_conv(r.op);
    sdpa += r.op == SweepOp::SdpaFwdBwd;
    if (is_conv(r.op)) CHECK(r.layout == (r.dtype == "float32" ? "nchw" : "nhwc"));
  }
  CHECK(convs > 100);
  CHECK(sdpa == 10);
}

TEST_CASE("a record reads back from what the writer makes of it") {
  const KernelSweep s = load_kernel_sweep(kSweepTestFixture);
  nlohmann::json again = {{"records", nlohmann::json::array()}};
  for (const SweepRecord& r : s.records) again["records"].push_back(sweep_record_to_json(r));
  const KernelSweep t = kernel_sweep_from_text(again.dump(), "again.json");
  REQUIRE(t.records.size() == s.records.size());
  for (size_t i = 0; i < s.records.size(); ++i)
    CHECK(sweep_record_to_json(t.records[i]) == sweep_record_to_json(s.records[i]));
}

TEST_CASE("a bad sweep is refused naming the record and the field") {
  check_refused("not json", "", "not a JSON kernel sweep");
  check_refused("[]", "", "expected an object");
  check_refused(R"({"records": []})", "records", "is empty");
  check_refused(R"({"meta": {}})", "records", "missing");
  check_refused(R"({"records": {}})", "records", "must be an array");
  check_refused(R"({"records": [], "extra": 1})", "extra", "unknown field");
  check_refused(R"({"records": [], "seconds": "long"})", "seconds", "non-negative number");
  check_refused(one("3"), "records[0]", "must be an object");
  check_refused(one(R"({"op": "conv3d", "dtype": "float32", "us": 1})"), "records[0].op", "unknown op 'conv3d'");
  check_refused(one("{" + kConv + R"(, "dtype": "float32"})"), "records[0].us", "missing");
  check_refused(one("{" + kConv + R"(, "dtype": "float32", "us": "12"})"), "records[0].us", "must be a number");
  check_refused(one("{" + kConv + R"(, "dtype": "float32", "us": -3})"), "records[0].us", "(0, 1e+09] us");
  check_refused(one("{" + kConv + R"(, "dtype": "float32", "us": 3, "us_min": 4})"), "records[0].us_min",
                "above the median");
  check_refused(one(R"({"op": "gemm", "m": 4, "n": -4, "k": 4, "dtype": "bf16", "us": 3})"), "records[0].n",
                "must be in [1, ");
  check_refused(one(R"({"op": "gemm", "m": 4, "n": 4.5, "k": 4, "dtype": "bf16", "us": 3})"), "records[0].n",
                "must be an integer");
  check_refused(one(R"({"op": "gemm", "m": 4, "k": 4, "dtype": "bf16", "us": 3})"), "records[0].n", "missing");
  check_refused(one(R"({"op": "gemm", "m": 4, "n": 4, "k": 4, "dtype": "int8", "us": 3})"), "records[0].dtype",
                "'int8' is not one of fp32, tf32, bf16, fp16");
  check_refused(one(R"({"op": "gemm", "m": 4, "n": 4, "k": 4, "dtype": "bf16", "us": 3, "batch": 2})"),
                "records[0].batch", "unknown field for op 'gemm'");
  check_refused(one("{" + kConv + R"(, "groups": 5, "dtype": "float32", "us": 3})"), "records[0].groups",
                "must divide c");
  check_refused(one(R"({"op": "sdpa_fwd", "b": 1, "heads": 2, "seq": 64, "d": 64, "dtype": "bfloat16", "us": 3})"),
                "records[0].causal", "missing");
  check_refused(one(R"({"op": "add", "numel": 10, "bytes": 0, "dtype": "float32", "us": 3})"), "records[0].bytes",
                "must be in [1, ");
  check_refused(one(R"({"op": "add", "numel": 10, "bytes": 120, "dtype": "float32", "us": 3, "flops": "many"})"),
                "records[0].flops", "non-negative number");
  check_refused(one(R"({"op": "add", "numel": 99999999999999999999, "bytes": 1, "dtype": "float32", "us": 3})"),
                "records[0].numel", "");
}
