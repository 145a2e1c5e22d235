#include "cli/model_command.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iomanip>
#include <ostream>

#include "common/config_error.h"
#include "common/strings.h"
#include "policies/concurrency/op_dag.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/core/saved_bytes.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/torch_step_graph.h"
#include "workloads/zoo.h"

namespace dlsim {

CLI::App* add_model_command(CLI::App& app, ModelCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("model", "describe a model: parameters, MACs, activation memory");
  cmd->add_option("NAME", o.model, "a zoo name, an .onnx file, a Llama-family config.json or a recorded step "
                                   "(FILE.torchstep.json)");
  cmd->add_option("--batch", o.batch, "batch size (default 32; a recorded step's own)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--image-size", o.image_size, "image side (0: the model's default)");
  cmd->add_option("--seq-len", o.seq_len, "sequence length (0: the model's default)");
  cmd->add_option("--attention", o.attention, choice_names(kAttentionChoices) + " (default: the model's; sdpa-flash for Llama-family models and gpt2-small)");
  cmd->add_option("--max-graph-nodes", o.max_graph_nodes, "most nodes an ONNX file (or a Llama config's graph) may hold")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--optimizer", o.optimizer, choice_names(kOptimizers))->capture_default_str();
  cmd->add_option("--precision", o.precision, choice_names(kPrecisions))->capture_default_str();
  cmd->add_option("--kernels", o.kernels, choice_names(kKernelChoices))->capture_default_str();
  cmd->add_option("--memory-format", o.memory_format, choice_names(kMemoryFormats))->capture_default_str();
  cmd->add_option("--swap", o.swap, "checkpointing policy whose saved bytes to report: none, checkpoint or sqrt")
      ->capture_default_str();
  cmd->add_option("--param", o.params, "the swap policy's parameter KEY=VALUE (repeatable; dlsim list shows them)");
  cmd->add_flag("--json", o.json, "print one JSON object");
  cmd->add_flag("--list", o.list, "list the model zoo");
  cmd->add_flag("--parallelism", o.parallelism,
                "the training graph's width per stage (ops that could run at once), forward and backward");
  return cmd;
}

namespace {

// An enum option by the name to_string gives its values.
template <class E, size_t N>
E choose(const std::string& v, const std::string& option, const std::array<E, N>& values) {
  if (auto e = choice_named(v, values)) return *e;
  throw ConfigError("<command line>", 0, option, "unknown value '" + v + "'; valid: " + choice_names(values));
}

// The SPAA paper's motivating figure for any model: how many ops each ASAP stage holds.
int print_parallelism(const ModelCommandOptions& o, const Graph& train, std::ostream& out) {
  const OpDag dag = op_dag(train);
  const std::vector<int> fwd = stage_widths(train, dag, {Phase::Forward});
  const std::vector<int> bwd = stage_widths(train, dag, {Phase::Backward, Phase::Optimizer});
  const std::vector<int> all = stage_widths(train, dag, {Phase::Forward, Phase::Backward, Phase::Optimizer});
  auto max_of = [](const std::vector<int>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); };
  auto mean_of = [](const std::vector<int>& v) {
    double t = 0;
    for (int x : v) t += x;
    return v.empty() ? 0.0 : t / static_cast<double>(v.size());
  };
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"batch", o.batch},
                        {"max_width", max_of(all)},
                        {"forward", {{"stages", fwd.size()}, {"max_width", max_of(fwd)}, {"widths", fwd}}},
                        {"backward", {{"stages", bwd.size()}, {"max_width", max_of(bwd)}, {"widths", bwd}}}};
    out << j.dump(2) << '\n';
    return 0;
  }
  auto row = [&](const char* name, const std::vector<int>& w) {
    out << name << w.size() << " stages, width max " << max_of(w) << ", mean " << fixed(mean_of(w), 2) << '\n'
        << "  widths:";
    for (int x : w) out << ' ' << x;
    out << '\n';
  };
  out << "model                     " << o.model << " (batch " << o.batch << "), ops that could run at once per "
      << "ASAP stage (ops that launch no kernel not counted)\n";
  row("forward                   ", fwd);
  row("backward + optimizer      ", bwd);
  out << "training graph max width  " << max_of(all) << '\n';
  return 0;
}

// The swap policy's plan for the graph in its stored order (a serial schedule). Only policies that recompute
// are accounted here: a copy's residency depends on timing, which is `dlsim run`'s business.
SavedBytes saved_under(const ModelCommandOptions& o, const Graph& train) {
  Schedule schedule;
  for (const Op& op : train.ops()) schedule.order.push_back(op.id);
  schedule.stream_of.assign(train.ops().size(), 0);
  if (o.swap == "none") {
    if (!o.params.empty()) throw ConfigError("<command line>", 0, "--param", "swap policy 'none' has no parameters");
    return saved_bytes(train, schedule.order, {});
  }
  if (o.swap != "checkpoint" && o.swap != "sqrt") {
    swap_registry().get(o.swap, "<command line>", 0, "--swap");  // an unknown name lists the registry
    throw ConfigError("<command line>", 0, "--swap",
                      "'" + o.swap + "' copies tensors, whose bytes depend on timing: use dlsim run; dlsim model "
                      "accounts none, checkpoint and sqrt");
  }
  const auto& entry = swap_registry().get(o.swap, "<command line>", 0, "--swap");
  Params params(entry.params);
  for (const std::string& kv : o.params) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("<command line>", 0, "--param", "expected KEY=VALUE, got '" + kv + "'");
    set_param_from_text(entry.params, params, kv.substr(0, eq), kv.substr(eq + 1), entry.name);
  }
  check_params(entry.params, params, entry.name);
  // The policy's plan as PyTorch runs it, in-place ops replayed included (which the simulator cannot run yet).
  const SwapPlan plan = policy_plan(o.swap, params, train, schedule.order);
  return saved_bytes(train, schedule.order, plan);
}

}  // namespace

int run_model_command(const ModelCommandOptions& given, std::ostream& out, std::ostream& /*err*/) {
  ModelCommandOptions o = given;
  Graph fwd, train;
  if (is_torch_step_path(o.model)) {
    // A recorded step is its own training graph at its own batch: the forward-phase ops give the MACs, the
    // learnable tensors the parameters (summarize), and the numerics are the recording's.
    train = load_torch_step(o.model, o.max_graph_nodes).graph;
    if (o.batch != 0 && o.batch != train.batch)
      throw ConfigError("<command line>", 0, "--batch", "'" + o.model + "' was recorded at batch " +
                                                        std::to_string(train.batch));
    o.batch = train.batch;
    fwd = train;
  } else if (o.batch == 0) {
    o.batch = 32;
  }
  if (o.list) {
    for (const auto& m : model_zoo()) out << std::left << std::setw(20) << m.name << " " << m.description << '\n';
    return 0;
  }
  if (o.model.empty()) throw ConfigError("<command line>", 0, "NAME", "give a model name, an .onnx file or a Llama-family config.json (dlsim model --list)");
  if (o.batch <= 0) throw ConfigError("<command line>", 0, "--batch", "must be a positive integer");
  ModelOptions mo;
  mo.batch = o.batch;
  mo.image_size = o.image_size;
  mo.seq_len = o.seq_len;
  mo.max_graph_nodes = o.max_graph_nodes;
  if (!o.attention.empty()) mo.attention = choose(o.attention, "--attention", kAttentionChoices);
  mo.training.optimizer = choose(o.optimizer, "--optimizer", kOptimizers);
  mo.training.precision = choose(o.precision, "--precision", kPrecisions);
  mo.training.kernels = choose(o.kernels, "--kernels", kKernelChoices);
  mo.training.memory_format = choose(o.memory_format, "--memory-format", kMemoryFormats);
  try {  // a setting the model does not read (--seq-len on a CNN), named by its option
    check_model_settings(o.model, mo);
  } catch (const ConfigError& e) {
    std::string option = "--" + e.key();
    std::replace(option.begin(), option.end(), '_', '-');
    throw ConfigError("<command line>", 0, e.key() == "model" ? "NAME" : option, e.message());
  }
  try {
    if (train.ops().empty()) fwd = build_forward_graph(o.model, mo);
  } catch (const ConfigError& e) {
    if (!e.file().empty()) throw;  // a config.json's or an ONNX file's own place
    // The model's options came from this command line, not from a file: say so rather than "<input>".
    throw ConfigError("<command line>", 0, e.key() == "model" ? "NAME" : e.key(), e.message());
  }
  if (train.ops().empty()) train = make_training_graph(fwd, mo.training);
  ModelSummary s = summarize(fwd, train);
  if (o.parallelism) return print_parallelism(o, train, out);
  const SavedBytes saved = saved_under(o, train);
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"batch", o.batch},
                        {"params", s.params},
                        {"fwd_macs", s.fwd_macs},
                        {"swap", o.swap},
                        {"saved_for_backward_bytes", saved.saved_for_backward_bytes},
                        {"backward_peak_saved_bytes", saved.backward_peak_saved_bytes},
                        {"ops", s.ops},
                        {"tensors", s.tensors}};
    out << j.dump(2) << '\n';
    return 0;
  }
  out << "model                     " << o.model << " (batch " << o.batch << ")\n"
      << "parameters                " << s.params << '\n'
      << "forward MACs              " << fixed(s.fwd_macs, 0) << " (" << fixed(s.fwd_macs / 1e9, 2) << " G)\n"
      << "saved for backward        " << saved.saved_for_backward_bytes << " bytes ("
      << mib(saved.saved_for_backward_bytes) << " MiB)" << (o.swap == "none" ? "" : ", swap " + o.swap) << '\n'
      << "backward peak of saved    " << saved.backward_peak_saved_bytes << " bytes ("
      << mib(saved.backward_peak_saved_bytes) << " MiB)\n"
      << "training graph            " << s.ops << " ops, " << s.tensors << " tensors\n";
  return 0;
}

}  // namespace dlsim
