#include "validate/calibrate/kernel_fit/fitted_hw_file.h"

#include <catch2/catch.hpp>

using namespace dlsim;

TEST_CASE("a refit replaces the kernel_model entry and the description, and keeps everything else") {
  const std::string base =
      "# a datasheet file\n"
      "description: >\n"
      "  a GPU\n"
      "  over two lines\n"
      "\n"
      "# the peak rates\n"
      "sms: 132\n"
      "kernel_model:\n"
      "  fitted_from: \"an older sweep\"\n"
      "  classes:\n"
      "    gemm.bf16: {fixed_us: 1}\n"
      "# the host link\n"
      "pcie:\n"
      "  gen: 5\n";
  FittedKernels f;
  f.fitted_from = "new.json";
  f.classes["gemm.bf16"] = {20, 1.2, 0, 0.5, 149};
  const std::string text = fitted_hardware_text(base, f, "fitted by a test", "a GPU; refitted");
  CHECK(text ==
        "# a datasheet file\n"
        "description: \"a GPU; refitted\"\n"
        "\n"
        "# the peak rates\n"
        "sms: 132\n"
        "# the host link\n"
        "pcie:\n"
        "  gen: 5\n"
        "\n"
        "# fitted by a test\n"
        "kernel_model:\n"
        "  fitted_from: \"new.json\"\n"
        "  tile: 128\n"
        "  min_split_k: 512\n"
        "  classes:\n"
        "    gemm.bf16: {fixed_us: 20, flop_scale: 1.2, wave_scale: 0, byte_scale: 0.5, records: 149}\n");
}

TEST_CASE("refitting a fitted file leaves one section and one header comment") {
  FittedKernels f;
  f.fitted_from = "first.json";
  f.classes["gemm.bf16"] = {20, 1.2, 0, 0.5, 149};
  const std::string first = fitted_hardware_text("description: a GPU\nsms: 132\n", f,
                                                 "kernel_model: fitted by a first command", "a GPU; fitted");
  f.fitted_from = "second.json";
  const std::string second = fitted_hardware_text(first, f, "kernel_model: fitted by a second command", "a GPU; refitted");
  CHECK(second ==
        "description: \"a GPU; refitted\"\n"
        "sms: 132\n"
        "\n"
        "# kernel_model: fitted by a second command\n"
        "kernel_model:\n"
        "  fitted_from: \"second.json\"\n"
        "  tile: 128\n"
        "  min_split_k: 512\n"
        "  classes:\n"
        "    gemm.bf16: {fixed_us: 20, flop_scale: 1.2, wave_scale: 0, byte_scale: 0.5, records: 149}\n");
}
