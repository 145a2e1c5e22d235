#pragma once
// One row of a sweep's runs.csv: the columns, and a run's figures written as a line. Read by --resume and --merge
// (experiment/sweep/runs_csv_file.h) and by the figures' column checks (experiment/sweep/plots.h).
#include <cstddef>
#include <string>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"

namespace dlsim {

// The CSV header and one row (deterministic: no wall-clock figures). The first columns are every experiment
// field, runs_csv_key; --resume and --merge match rows to points on them.
std::string runs_csv_header();
std::string runs_csv_row(const ExperimentResult& r, const std::string& status, const std::string& error);
// Exact: two experiments share a key only when every field, each hw_override value included (lists and nested
// mappings in full, experiment/hw_override_label.h), is the same; and independent of the working folder: a
// model or hardware file is named relative to the folder of the experiment's (sweep) file.
std::string runs_csv_key(const Experiment& e);
// The key dlsim wrote before it was exact (hw_override lists as "...", files as found from the working folder,
// overrides in file order), by which rows of an older runs.csv are still matched. `exact` is false when it loses
// information (a list or nested value in hw_override): then no row can be told apart by it.
std::string runs_csv_legacy_key(const Experiment& e, bool& exact);
size_t runs_csv_key_columns();

}  // namespace dlsim
