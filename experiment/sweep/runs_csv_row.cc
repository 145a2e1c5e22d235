#include "experiment/sweep/runs_csv_row.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "common/strings.h"
#include "experiment/hw_override_label.h"
#include "experiment/sweep/csv_line.h"

namespace dlsim {

namespace {

const char* const kKeyColumns =
    "model,batch,hw,pool,swap,concurrency,iterations,image_size,seq_len,optimizer,precision,tf32,memory_format,"
    "kernels,launch,max_graph_nodes";

}  // namespace

size_t runs_csv_key_columns() {
  const std::string k = kKeyColumns;
  return static_cast<size_t>(std::count(k.begin(), k.end(), ',')) + 1;
}

std::string runs_csv_header() {
  std::string h = kKeyColumns;
  h += ",status,iteration_time_us,peak_live_bytes,"
       "peak_reserved_bytes,fragmentation,device_mallocs,device_frees,alloc_time_us,events,"
       "no_swap_iteration_time_us,no_swap_peak_live_bytes,overhead,swap_target_bytes,swap_limit_met,swap_out_bytes,"
       "swap_in_bytes,swap_transfers,copy_d2h_busy,copy_h2d_busy,swap_lower_bound_us,swap_planned_peak_bytes,"
       "ideal_iteration_us,up_front_reserved_bytes,reserved_excess,error";
  return h;
}

namespace {

// A model or hardware file as the key names it: relative to the folder of the experiment's file (the sweep
// file), whatever the working folder was when it was found, so that a sweep resumed or merged from another
// folder matches its rows; a zoo or configs/hw name as it is.
std::string key_path(const std::string& path, bool is_file, const std::string& experiment_file) {
  namespace fs = std::filesystem;
  if (!is_file) return path;
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::path(path), ec);
  if (ec) return fs::path(path).lexically_normal().generic_string();
  const fs::path parent = fs::path(experiment_file).parent_path();
  const fs::path base = fs::weakly_canonical(parent.empty() ? fs::path(".") : parent, ec);
  if (ec || experiment_file.empty()) return target.generic_string();
  const fs::path rel = target.lexically_relative(base);
  return rel.empty() ? target.generic_string() : rel.generic_string();
}

bool is_model_file(const std::string& m) {
  return m.size() > 5 && (m.ends_with(".onnx") || m.ends_with(".json"));
}

bool is_hw_file(const std::string& hw) { return hw.find(".yaml") != std::string::npos; }

// The columns after model and hw, the same in both forms of the key.
std::string key_tail(const Experiment& e) {
  std::ostringstream o;
  o << ',' << csv_escape(e.pool.label()) << ',' << csv_escape(e.swap.label()) << ','
    << csv_escape(e.concurrency.label()) << ',' << e.iterations << ',' << e.image_size << ',' << e.seq_len << ','
    << to_string(e.optimizer) << ',' << to_string(e.precision) << ',' << to_string(e.tf32) << ','
    << to_string(e.memory_format) << ',' << to_string(e.kernels) << ',' << to_string(e.launch) << (e.sync_every_step ? "+sync" : "") << ','
    << e.max_graph_nodes;
  return o.str();
}

}  // namespace

std::string runs_csv_key(const Experiment& e) {
  std::string model = key_path(e.model, is_model_file(e.model), e.file);
  if (e.attention) model += std::string("(attention=") + to_string(*e.attention) + ")";
  std::string hw = key_path(e.hw, is_hw_file(e.hw), e.file);
  if (const std::string o = hw_override_label(e.hw_override); !o.empty()) hw += "+" + o;
  // A data-parallel layout is how many GPUs the run stands for: named beside the hardware ("h100-sxm+fsdp=8"), so
  // that a sweep over layouts has one row each; one-GPU runs keep the key they always had.
  if (!e.parallel.is_single()) hw += "+" + e.parallel.label();
  return csv_escape(model) + ',' + std::to_string(e.batch) + ',' + csv_escape(hw) + key_tail(e);
}

std::string runs_csv_legacy_key(const Experiment& e, bool& exact) {
  std::string hw = e.hw;
  const std::string o = legacy_hw_override_label(e.hw_override, exact);
  if (e.hw_override.IsMap() && e.hw_override.size() > 0) hw += "+" + o;
  return csv_escape(e.model_label()) + ',' + std::to_string(e.batch) + ',' + csv_escape(hw) + key_tail(e);
}

std::string runs_csv_row(const ExperimentResult& r, const std::string& status, const std::string& error) {
  std::ostringstream o;
  o << runs_csv_key(r.experiment) << ',' << status << ',';
  if (status == "error") {
    o << ",,,,,,,,,,,,,,,,,,,,,,,";
  } else {
    o << fixed(r.iteration_time_us, 3) << ',' << r.peak_live_bytes << ',' << r.peak_reserved_bytes << ','
      << fixed(r.fragmentation(), 4) << ',' << r.device_mallocs << ',' << r.device_frees << ','
      << fixed(r.alloc_time_us, 3) << ',' << r.events << ',';
    const auto& w = r.swap;  // empty without swapping: empty cells
    auto num = [&](const char* k, int digits) {
      if (w.contains(k)) o << (w[k].is_number_float() ? fixed(w[k].get<double>(), digits) : w[k].dump());
      o << ',';
    };
    num("no_swap_iteration_time_us", 3);
    num("no_swap_peak_live_bytes", 0);
    num("overhead", 4);
    num("swap_target_bytes", 0);
    num("swap_limit_met", 0);
    num("swap_out_bytes", 0);
    num("swap_in_bytes", 0);
    num("swap_transfers", 0);
    num("copy_d2h_busy", 4);
    num("copy_h2d_busy", 4);
    num("swap_lower_bound_us", 3);
    num("swap_planned_peak_bytes", 0);
    o << fixed(r.ideal_iteration_us, 3) << ',' << r.up_front_reserved_bytes << ','
      << (r.reserved_up_front() ? "reserved up front" : "fragmentation") << ',';
  }
  // One line per row whatever the message: the file is read back line by line (--resume, --merge).
  std::string message = status == "oom" ? r.oom_where : error;
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\r', ' ');
  o << csv_escape(message);
  return o.str();
}

}  // namespace dlsim
