#include "experiment/sweep/mpi.h"

#include "common/config_error.h"

#ifdef DLSIM_WITH_MPI
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <thread>
#endif

namespace dlsim {

std::string mpi_not_built_message() {
  return "this dlsim was built without MPI; install Open MPI (scripts/install-deps.sh installs openmpi-bin and "
         "libopenmpi-dev) and build again (CMake finds it; -DDLSIM_WITH_MPI=OFF turns it off), or run without "
         "--mpi (--jobs N on one machine, --shard I/N for job arrays)";
}

#ifndef DLSIM_WITH_MPI

bool mpi_built() { return false; }

int run_sweep_mpi(const Sweep&, const SweepOptions&, const RunFn&, std::ostream&) {
  throw ConfigError("<command line>", 0, "--mpi", mpi_not_built_message());
}

#else

bool mpi_built() { return true; }

namespace {

constexpr int kTagRow = 1;   // worker -> rank 0: a finished row (or, first, a request for work)
constexpr int kTagWork = 2;  // rank 0 -> worker: the next point's index, or -1: no more

// A row message: the point's index (-1: none yet, just asking for work), then status, error and line, each
// ended by a zero byte.
std::string encode(int64_t point, const PointRow& row) {
  std::string m(sizeof point, '\0');
  std::memcpy(m.data(), &point, sizeof point);
  for (const std::string* part : {&row.status, &row.error, &row.line}) {
    m += *part;
    m += '\0';
  }
  return m;
}

int64_t decode(const std::string& m, PointRow& row) {
  int64_t point = -1;
  std::memcpy(&point, m.data(), sizeof point);
  size_t at = sizeof point;
  for (std::string* part : {&row.status, &row.error, &row.line}) {
    const size_t end = m.find('\0', at);
    *part = m.substr(at, end - at);
    at = end + 1;
  }
  return point;
}

// Rank 0's executor: answers every request with the next point until none is left, then tells each worker to
// stop. It polls with a short sleep instead of a blocking probe: Open MPI's blocking calls spin a core, which a
// rank 0 that only hands out work would take from the ranks that run it.
void coordinate(int ranks, const std::vector<size_t>& todo, const RowSink& sink) {
  size_t next = 0;
  int working = ranks - 1;
  while (working > 0) {
    int ready = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagRow, MPI_COMM_WORLD, &ready, &status);
    if (!ready) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&status, MPI_CHAR, &bytes);
    std::string message(static_cast<size_t>(bytes), '\0');
    MPI_Recv(message.data(), bytes, MPI_CHAR, status.MPI_SOURCE, kTagRow, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    PointRow row;
    const int64_t point = decode(message, row);
    int64_t give = -1;
    if (next < todo.size()) give = static_cast<int64_t>(todo[next++]);
    MPI_Send(&give, 1, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
    if (give < 0) --working;
    if (point >= 0) sink(static_cast<size_t>(point), std::move(row));
  }
}

void work(const Sweep& s, const RunFn& run) {
  std::string message = encode(-1, PointRow{});
  while (true) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kTagRow, MPI_COMM_WORLD);
    int64_t point = -1;
    MPI_Recv(&point, 1, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (point < 0 || static_cast<size_t>(point) >= s.points.size()) return;
    message = encode(point, run_point(s.points[static_cast<size_t>(point)].parsed, run));
  }
}

}  // namespace

int run_sweep_mpi(const Sweep& s, const SweepOptions& opt, const RunFn& run, std::ostream& log) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  if (rank == 0) {
    try {
      if (!opt.quiet) log << "MPI: " << ranks << " ranks (" << (ranks > 1 ? ranks - 1 : 1) << " running points)\n";
      const PointExecutor execute = ranks > 1 ? PointExecutor([ranks](const std::vector<size_t>& todo, const RowSink& sink) {
                                                  coordinate(ranks, todo, sink);
                                                })
                                              : thread_executor(s, run, 1);
      status = run_sweep(s, opt, execute, log).errors ? 1 : 0;
    } catch (const std::exception& e) {
      // The workers wait for work that will not come: the job ends here, with the error.
      std::cerr << "dlsim: error: " << e.what() << std::endl;
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  } else {
    work(s, run);
  }
  MPI_Finalize();
  return status;
}

#endif

}  // namespace dlsim
