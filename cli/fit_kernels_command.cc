#include "cli/fit_kernels_command.h"

#include <CLI/CLI.hpp>


#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/input_file.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "hw/hardware_base.h"
#include "hw/gpu_spec_file.h"
#include "hw/math_path.h"
#include "validate/calibrate/kernel_fit/fit_samples.h"
#include "validate/calibrate/kernel_fit/fitted_hw_file.h"
#include "validate/calibrate/kernel_fit/kernel_crossval.h"
#include "validate/calibrate/kernel_fit/kernel_fit.h"
#include "validate/calibrate/kernel_fit/kernel_fit_report.h"
#include "validate/calibrate/kernel_fit/trace_samples.h"
#include "validate/calibrate/torch_profile/matched_profiles.h"
#include "validate/calibrate/kernel_fit/zoo_shapes.h"

namespace dlsim {

CLI::App* add_fit_kernels_command(CLI::App& app, FitKernelsCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "fit-kernels", "fit the kernel model's classes to a sweep of measured kernels and write a hardware file with it");
  cmd->add_option("SWEEP", o.sweeps, "the sweeps, of one GPU (validate/torch/kernel_sweep.py's JSON)");
  cmd->add_option("--hw", o.hw, "the hardware file to start from (a configs/hw name or a path)");
  cmd->add_option("--out", o.out, "the hardware file to write (with --shapes-of: the shapes file)");
  cmd->add_option("--report", o.report, "write the cross-validation here (Markdown)");
  cmd->add_option("--predictions", o.predictions, "write each sample's predicted times here (JSON)");
  cmd->add_option("--description", o.description,
                  "the written file's description (default: BASE's, saying its kernel times are fitted to the sweep)");
  cmd->add_option("--folds", o.folds, "folds of the k-fold cross-validation")->check(CLI::Range(2, 100))
      ->capture_default_str();
  cmd->add_option("--tile", o.tile, "output tile side of a tensor-core kernel (wave quantisation)")
      ->check(CLI::Range(1.0, 4096.0))->capture_default_str();
  cmd->add_option("--min-split-k", o.min_split_k, "least part of the reduction one split-K slice handles")
      ->check(CLI::Range(1.0, 1e9))->capture_default_str();
  cmd->add_option("--trace", o.traces, "torch.profiler traces of training steps whose kernels are samples too");
  cmd->add_option("--experiment", o.experiments, "with --trace: the experiment of each trace (or one for all)");
  cmd->add_option("--gap-us", o.gap_us, "with --trace: the GPU's idle time per kernel added to each trace sample")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  cmd->add_option("--shapes-of", o.shapes_of, "instead: write the kernel shapes of these zoo models (comma-separated)");
  cmd->add_option("--batch", o.batches, "with --shapes-of: the batch sizes")->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  return cmd;
}

namespace {

// A meta field as text ("" when absent): strings as they are, anything else as JSON.
std::string meta_text(const nlohmann::json& meta, const std::string& key) {
  if (!meta.contains(key)) return "";
  const nlohmann::json& v = meta[key];
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string sweep_description(const KernelSweep& sweep) {
  std::string s = sweep.file;
  std::vector<std::string> parts;
  if (auto d = meta_text(sweep.meta, "device"); !d.empty()) parts.push_back(d);
  if (auto t = meta_text(sweep.meta, "torch"); !t.empty()) parts.push_back("torch " + t);
  if (auto c = meta_text(sweep.meta, "cudnn"); !c.empty()) parts.push_back("cuDNN " + c);
  parts.push_back(std::to_string(sweep.records.size()) + " records");
  return s + " (" + join(parts) + ")";
}

// The sweeps' records as one sweep and their samples, each sample's record its index in the joined records.
struct JoinedSweeps {
  KernelSweep all;
  std::vector<FitSample> samples;
  bool with_dispatch = true;  // every sweep's timings hold the host's dispatch
  bool mixed = false;         // some do and some do not
  std::string description, timing, files;
};

// A record whose math path the base GPU has no peak for cannot be fitted against it.
void check_paths(const KernelSweep& sweep, const std::vector<FitSample>& samples, const GpuSpec& spec,
                 const std::string& hw) {
  for (const FitSample& s : samples)
    if (!is_memory_family(s.shape.family) && !(path_peak(spec, s.shape.path) > 0))
      throw ConfigError(sweep.file, 0, "records[" + std::to_string(s.record) + "].dtype",
                        std::string("runs on the ") + to_string(s.shape.path) + " path, which " + hw +
                            " gives no peak_tflops for: fit against the file of the GPU the sweep ran on");
}

int write_zoo_shapes(const FitKernelsCommandOptions& o, std::ostream& out) {
  if (o.out.empty()) throw ConfigError("<command line>", 0, "--out", "--shapes-of needs --out SHAPES.json");
  if (!o.sweeps.empty() || !o.hw.empty() || !o.report.empty() || !o.predictions.empty())
    throw ConfigError("<command line>", 0, "--shapes-of", "takes no SWEEP, --hw, --report or --predictions");
  const std::vector<std::string> models = split(o.shapes_of, ',');
  const std::vector<SweepRecord> records = zoo_kernel_shapes(models, o.batches);
  nlohmann::json j = {{"meta", {{"from", "dlsim fit-kernels --shapes-of " + o.shapes_of}}},
                      {"records", nlohmann::json::array()}};
  for (const SweepRecord& r : records) j["records"].push_back(sweep_record_to_json(r));
  write_file_atomically(o.out, j.dump(1) + "\n", "--out");
  out << "wrote " << records.size() << " kernel shapes of " << o.shapes_of << " to " << o.out << '\n';
  return 0;
}

std::string fit_command_line(const FitKernelsCommandOptions& o) {
  std::string c = "dlsim fit-kernels " + join(o.sweeps, " ") + " --hw " + o.hw + " --out " + o.out;
  if (!o.report.empty()) c += " --report " + o.report;
  if (!o.predictions.empty()) c += " --predictions " + o.predictions;
  if (o.folds != 5) c += " --folds " + std::to_string(o.folds);
  if (o.tile != 128) c += " --tile " + fixed(o.tile, 0);
  if (o.min_split_k != 512) c += " --min-split-k " + fixed(o.min_split_k, 0);
  if (!o.description.empty()) c += " --description '" + o.description + "'";
  for (const std::string& t : o.traces) c += " --trace " + t;
  for (const std::string& e : o.experiments) c += " --experiment " + e;
  if (!o.traces.empty()) c += " --gap-us " + significant(o.gap_us);
  return c;
}

// Whether the sweep's timings hold the host's dispatch of each call (FittedKernels::fixed_includes_dispatch): its
// meta's timing_mode, `events` (kernel_sweep.py's default) or `dry-run` yes, `graph` or `trace` no. A sweep
// without one was timed as the shared kernels.json was, with CUDA events around each call (its README says so).
bool fixed_includes_dispatch(const KernelSweep& sweep) {
  const std::string mode = meta_text(sweep.meta, "timing_mode");
  if (mode.empty() || mode == "events" || mode == "dry-run") return true;
  // graph: CUDA-graph replays of one op; trace: kernels' own durations in a profiler trace (vit_sdpa_records.py).
  if (mode == "graph" || mode == "trace") return false;
  throw ConfigError(sweep.file, 0, "meta.timing_mode", "must be events, graph, trace or dry-run, got '" + mode + "'");
}

// Each sweep's samples (device-timed where its timing mode says so), its paths checked against `base`.
JoinedSweeps join_sweeps(const std::vector<std::string>& files, const GpuSpec& base, const std::string& hw,
                         std::vector<std::string>& notes) {
  JoinedSweeps j;
  std::vector<std::string> descriptions, timings;
  std::string first_device;
  for (const std::string& file : files) {
    const KernelSweep sweep = load_kernel_sweep(file);
    // One GPU's kernel model: a sweep of another GPU (its meta.device names a different one) is not merged into it.
    const std::string device = meta_text(sweep.meta, "device");
    if (&file == &files.front()) {
      first_device = device;
    } else if (!device.empty() && !first_device.empty() && device != first_device) {
      throw ConfigError(file, 0, "meta.device",
                        "'" + device + "' is not the GPU of " + files.front() + " ('" + first_device +
                            "'): fit the sweeps of one GPU together");
    }
    std::vector<FitSample> samples = fit_samples(sweep, notes);
    check_paths(sweep, samples, base, hw);
    const bool with_dispatch = fixed_includes_dispatch(sweep);
    if (&file != &files.front() && with_dispatch != j.with_dispatch) j.mixed = true;
    j.with_dispatch = j.with_dispatch && with_dispatch;
    const size_t offset = j.all.records.size();
    for (FitSample& s : samples) {
      s.device_timed = !with_dispatch;
      s.record += offset;
      s.paired_record += offset;
      j.samples.push_back(std::move(s));
    }
    j.all.records.insert(j.all.records.end(), sweep.records.begin(), sweep.records.end());
    descriptions.push_back(sweep_description(sweep));
    std::string timing = meta_text(sweep.meta, "timing");
    if (timing.empty()) timing = meta_text(sweep.meta, "note");
    timings.push_back(files.size() == 1 || timing.empty() ? timing : file + ": " + timing);
  }
  j.all.file = join(files, ", ");
  j.files = join(files, " and ");
  j.description = join(descriptions, " and ");
  std::erase(timings, std::string());
  j.timing = join(timings, "; ");
  return j;
}

// The traces' kernels as samples (trace_samples.h), `split` sharing a unit's time among its ops. A trace whose
// matched ops launched no kernel (a CPU trace, or one without ProfilerActivity.CUDA) is an error.
TraceSamples load_trace_samples(const FitKernelsCommandOptions& o, const GpuSpec& base, const FittedKernels& split,
                                std::ostream& out) {
  if (o.experiments.empty())
    throw ConfigError("<command line>", 0, "--experiment", "--trace needs the experiment of each trace");
  const MatchedProfiles matched = load_matched_profiles(o.traces, o.experiments);
  for (const MatchedProfile& p : matched.profiles) {
    int64_t kernels = 0;
    for (const StepMatch& m : p.matches)
      for (const MatchedForwardOp& f : m.forward) {
        kernels += f.host->kernels;
        for (const ProfileHostOp* h : f.nodes) kernels += h->kernels;
      }
    if (kernels == 0)
      throw ConfigError(p.trace->file, 0, "traceEvents",
                        "no GPU kernel under its matched ops: record the trace with ProfilerActivity.CUDA on a GPU");
  }
  TraceSamples t = trace_fit_samples(matched.profiles, base, split, o.gap_us);
  out << "traces: " << t.units_sampled << " of " << t.units << " units with kernels became " << t.samples.size()
      << " samples (" << fixed(t.sampled_us / 1e3, 2) << " of " << fixed(t.kernel_us / 1e3, 2)
      << " ms of kernel time)\n";
  for (const std::string& s : t.skipped) out << "  not sampled: " << s << '\n';
  return t;
}

}  // namespace

int run_fit_kernels_command(const FitKernelsCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  if (!o.shapes_of.empty()) return write_zoo_shapes(o, out);
  if (o.sweeps.empty()) throw ConfigError("<command line>", 0, "SWEEP", "give the sweep file to fit (or --shapes-of)");
  if (o.hw.empty()) throw ConfigError("<command line>", 0, "--hw", "give the hardware file to start from");
  if (o.out.empty()) throw ConfigError("<command line>", 0, "--out", "give the hardware file to write");
  const std::string hw_path = resolve_hw_path(o.hw);
  const GpuSpec base = gpu_spec_from_yaml(load_hardware_document(hw_path), hw_path);  // its base: chain laid under it
  if (o.traces.empty() && !o.experiments.empty())
    throw ConfigError("<command line>", 0, "--experiment", "is for --trace: give the traces it profiled");
  for (const auto& [flag, file] : {std::pair{"--report", o.report}, std::pair{"--predictions", o.predictions}})
    if (!o.traces.empty() && !file.empty())
      throw ConfigError("<command line>", 0, flag, "cross-validates sweep records only: leave out --trace");
  std::vector<std::string> notes;
  const JoinedSweeps joined = join_sweeps(o.sweeps, base, hw_path, notes);
  const KernelSweep& sweep = joined.all;
  // A fit of both timings prices device time (kernel_fit.h): an event-timed sample's predictions lack the dispatch
  // its measurement holds, so the report's per-class errors would mix the two. --predictions says which is which.
  if (joined.mixed && !o.report.empty())
    throw ConfigError("<command line>", 0, "--report",
                      "the sweeps mix event- and graph-timed records, whose fit prices device time only: "
                      "cross-validate each timing's sweeps alone, or use --predictions (it says which sample is which)");
  std::vector<FitSample> samples = joined.samples;

  FittedKernels settings;
  settings.tile = o.tile;
  settings.min_split_k = o.min_split_k;
  FittedKernels fitted = fit_kernel_classes(samples, base, settings, notes);
  std::string from_traces;
  const size_t sweep_samples = samples.size();
  if (!o.traces.empty()) {
    // The sweep's fit shares a unit's time among its ops; then the sweep and the traces are fitted together.
    const TraceSamples traced = load_trace_samples(o, base, fitted, out);
    samples.insert(samples.end(), traced.samples.begin(), traced.samples.end());
    std::vector<std::string> refit_notes;
    fitted = fit_kernel_classes(samples, base, settings, refit_notes);
    notes = refit_notes;
    from_traces = " and " + std::to_string(traced.samples.size()) + " kernels of " +
                  std::to_string(o.traces.size()) + " profiler trace(s) (" + significant(o.gap_us) +
                  " us of idle GPU per kernel added)";
  }
  if (fitted.empty())
    throw ConfigError(sweep.file, 0, "records", "no class has " + std::to_string(kMinSamplesPerClass) +
                                                    " samples or more: nothing to fit");
  fitted.fitted_from = joined.description;
  fitted.timing = joined.timing;
  fitted.fixed_includes_dispatch = joined.with_dispatch && o.traces.empty();

  const std::string comment =
      "kernel_model: fitted by `" + fit_command_line(o) + "` to " + std::to_string(sweep_samples) +
      " kernels of " + joined.description + from_traces +
      ". Each class's time is fixed_us + flop_scale F + wave_scale F q "
      "+ byte_scale B (docs/real-gpu.md); ops of no fitted class keep the roofline above.";
  const std::string device = meta_text(load_kernel_sweep(o.sweeps.front()).meta, "device");
  const std::string description =
      !o.description.empty() ? o.description
                             : base.description + "; kernel times fitted to a PyTorch sweep" +
                                   (device.empty() ? std::string() : " on the " + device) + " (" + joined.files + ")";
  const std::string text = fitted_hardware_text(read_input_file(hw_path, "--hw"), fitted, comment, description);
  gpu_spec_from_yaml(parse_yaml_text(text, o.out), o.out);  // what is written must load
  write_file_atomically(o.out, text, "--out");
  out << "fitted " << fitted.classes.size() << " kernel classes to " << samples.size() << " samples of " << joined.files
      << "; wrote " << o.out << '\n';
  for (const std::string& n : notes) out << "  note: " << n << '\n';

  if (!o.report.empty() || !o.predictions.empty()) {
    const KernelCrossValidation cv = cross_validate_kernels(sweep, samples, base, settings, o.folds);
    if (!o.report.empty()) {
      write_file_atomically(o.report, kernel_fit_report(fit_command_line(o), fitted, cv, notes, o.hw), "--report");
      out << "wrote the cross-validation to " << o.report << '\n';
    }
    if (!o.predictions.empty()) {
      write_file_atomically(o.predictions, kernel_predictions_json(fit_command_line(o), o.hw, sweep, samples, cv),
                            "--predictions");
      out << "wrote each sample's predictions to " << o.predictions << '\n';
    }
  }
  return 0;
}

}  // namespace dlsim
