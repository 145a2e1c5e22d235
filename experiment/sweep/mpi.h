#pragma once
// `mpirun -np N dlsim sweep FILE --mpi`: the points of one sweep spread over the ranks of an MPI job. Rank 0
// coordinates: it reads runs.csv (--resume), hands out one point index at a time to whichever rank asks
// (dynamic load balancing: a rank that drew cheap points simply asks more often), writes each returned row to
// runs.csv as it arrives, and at the end writes the same runs.csv and summary.md, byte for byte, as a
// single-process `dlsim sweep` (experiment/sweep/sweep.h). Ranks 1..N-1 run points; with -np 1 rank 0 runs them itself.
// Built only when CMake finds MPI (Open MPI from Debian: openmpi-bin, libopenmpi-dev).
#include <iosfwd>
#include <string>

#include "experiment/sweep/sweep.h"

namespace dlsim {

// Whether this dlsim was built with MPI.
bool mpi_built();
// What to do when it was not: the ConfigError's message for --mpi.
std::string mpi_not_built_message();

// Initialises MPI, runs this rank's part of the sweep, finalises MPI. Returns this rank's exit status: rank 0's
// is 1 when a row has status "error", else 0. An error on rank 0 (an unreadable or foreign runs.csv on
// --resume) is printed and aborts the whole job with status 2.
int run_sweep_mpi(const Sweep& s, const SweepOptions& opt, const RunFn& run, std::ostream& log);

}  // namespace dlsim
