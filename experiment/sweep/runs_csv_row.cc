#include "experiment/sweep/runs_csv_row.h"

#include <algorithm>
#include <sstream>

#include "common/strings.h"
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

std::string runs_csv_key(const Experiment& e) {
  std::ostringstream o;
  o << csv_escape(e.model_label()) << ',' << e.batch << ',' << csv_escape(e.hw_label()) << ',' << csv_escape(e.pool.label()) << ','
    << csv_escape(e.swap.label()) << ',' << csv_escape(e.concurrency.label()) << ',' << e.iterations << ','
    << e.image_size << ',' << e.seq_len << ',' << to_string(e.optimizer) << ',' << to_string(e.precision) << ','
    << to_string(e.tf32) << ',' << to_string(e.memory_format) << ',' << to_string(e.kernels) << ','
    << to_string(e.launch) << ',' << e.max_graph_nodes;
  return o.str();
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
