#include "cli/validate_command.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "hw/hardware.h"
#include "hw/op_signature.h"
#include "hw/roofline.h"
#include "validate/gpu/cuda/device_info.h"
#include "validate/gpu/program_file.h"

using namespace dlsim;
namespace fs = std::filesystem;

// The plan dlsim validate writes is what the GPU harness runs: each Adam update one fused kernel (dlsim-cuda's Adam:
// 4 reads, 3 writes), not torch.optim's foreach passes (20 tensors' bytes and a sqrt temporary). So the harness's
// calibration (results/validation/calibrate_h100.sh) sees the kernels it measured, and its file's kernel table
// serves every update of the plan. When the plans carried the foreach form, the table missed each update and the
// file could no longer be remade from its own data.
TEST_CASE("dlsim validate: BERT-base's plan runs the harness's kernels (one fused Adam per parameter, a fused loss backward)") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-validate-adam-" + std::to_string(::getpid()));
  ValidateCommandOptions o;
  o.experiment_path = std::string(DLSIM_SOURCE_DIR) + "/configs/validation/bert-base-b16-cnmem.yaml";
  o.out_dir = dir.string();
  o.warmup = 0;
  o.iterations = 1;
  o.cuda_binary = "/nonexistent";
  std::ostringstream out, err;
  REQUIRE(run_validate_command(o, out, err) == cuda::kExitNoGpu);  // no harness here: the plan and the simulated trace
  const ProgramFile plan = read_program_file((dir / "plan.json").string());
  const Hardware hw = load_hardware("h100-sxm-harness");
  int updates = 0;
  for (const Op& op : plan.graph.ops()) {
    if (op.kind != OpKind::AdamUpdate) continue;
    ++updates;
    INFO(op.name);
    CHECK_FALSE(is_foreach_update(op));
    CHECK(op.bytes_read == 4 * plan.graph.tensor(op.inputs[0]).bytes);
    CHECK(op.bytes_written == 3 * plan.graph.tensor(op.inputs[0]).bytes);
    for (TensorId t : op.outputs) CHECK(plan.graph.tensor(t).kind != TensorKind::Workspace);
    CHECK(hw.spec.kernel_times.contains(op_signature(plan.graph, op)));
  }
  CHECK(updates > 100);  // BERT-base's parameters with a gradient
  // Its cross entropy backward is the harness's one fused kernel: no nll_loss_backward gradient (250 MB here).
  int losses = 0;
  for (const Op& op : plan.graph.ops()) {
    if (op.kind != OpKind::CrossEntropyLossBwd) continue;
    ++losses;
    CHECK(op.workspace == kNoTensor);
  }
  CHECK(losses >= 1);
  // Nor PyTorch's cuBLAS workspaces: the experiment pins them off (dlsim-cuda's cuBLAS takes no pool buffer).
  for (const Tensor& t : plan.graph.tensors()) CHECK_FALSE((t.kind == TensorKind::Workspace && t.persistent));
  fs::remove_all(dir);
}
