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
std::string runs_csv_key(const Experiment& e);
size_t runs_csv_key_columns();

}  // namespace dlsim
