// rtcp-bench exchange: the compute ranks' transpose between two ranks on this host
// (rtcp-exchange-bench under mpirun) under each MPICH/UCX setting observe could give local
// ranks, runs interleaved so that load from elsewhere falls on all alike; per setting the
// median Gb/s, its fraction of one thread's memcpy (measured in the same run), the CPU
// seconds per GB moved and the CPU a rank burns waiting for a late partner.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "ChildProcess.h"
#include "Executables.h"
#include "LocalRankEnvironment.h"
#include "rtcp/Benchmark.h"

namespace rtcp::observe::bench {
namespace {

namespace fs = std::filesystem;

struct Setting {
  std::string name;
  std::vector<std::string> environment;  ///< NAME=value
  std::vector<std::string> arguments;    ///< of rtcp-exchange-bench
};

std::vector<Setting> settings() {
  // The MPI-message transpose under each setting, and the MPI-3 shared-memory one, which
  // the ranks use when they are all on one node (observe's local ranks).
  return {{"mpich_default", {}, {}},
          {"ucx_sm", {"UCX_TLS=sm,self"}, {}},
          {"nolocal_ucx", {"MPIR_CVAR_NOLOCAL=1"}, {}},
          {"nolocal_ucx_sm", {"MPIR_CVAR_NOLOCAL=1", "UCX_TLS=sm,self"}, {}},
          {"observe_local_messages", localRankEnvironment(), {}},
          {"mpi3_shared_memory", localRankEnvironment(), {"--shared-memory", "1"}}};
}

/// `name: value` lines of a run's output.
std::map<std::string, double> figures(const std::string& path) {
  std::map<std::string, double> values;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(": ");
    if (line.starts_with("exchange.") && colon != std::string::npos)
      values[line.substr(9, colon - 9)] = std::strtod(line.c_str() + colon + 2, nullptr);
  }
  return values;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int exchange(int argc, char** argv) {
  int runs = 3, subbands = 32;
  bool help = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (arg == "--subbands" && i + 1 < argc)
      subbands = std::atoi(argv[++i]);
    else
      help = true;
  }
  if (help) {
    std::cout << "rtcp-bench exchange [--runs N] [--subbands N]: the ranks' transpose (16 "
                 "stations, 0.25 s blocks) between 2 ranks on this host per MPICH/UCX setting\n";
    return 0;
  }
  const fs::path log = fs::temp_directory_path() / "rtcp-exchange-bench.log";
  std::map<std::string, std::map<std::string, std::vector<double>>> results;
  for (int run = 0; run < runs; ++run)
    for (const Setting& s : settings()) {
      std::vector<std::string> command{"/usr/bin/env"};
      command.insert(command.end(), s.environment.begin(), s.environment.end());
      command.insert(command.end(), {mpirunExecutable(), "-np", "2", RTCP_EXCHANGE_BENCH_EXE,
                                     "--subbands", std::to_string(subbands)});
      command.insert(command.end(), s.arguments.begin(), s.arguments.end());
      ChildProcess child("exchange", command, log.string());
      child.start();
      child.waitFor(300);
      if (child.exitCode().value_or(-1) != 0) {
        std::cerr << "exchange: " << s.name << " failed (see " << log << ")\n";
        continue;
      }
      for (const auto& [key, value] : figures(log.string())) results[s.name][key].push_back(value);
    }
  fs::remove(log);
  for (const Setting& s : settings()) {
    auto& r = results[s.name];
    const std::string prefix = "exchange." + s.name + ".";
    printFigure(prefix + "gbps", median(r["gbps"]));
    printFigure(prefix + "fraction_of_memcpy", median(r["fraction_of_memcpy"]));
    printFigure(prefix + "cpu_seconds_per_gb", median(r["cpu_seconds_per_gb"]));
    printFigure(prefix + "wait_cpu_fraction", median(r["wait_cpu_fraction"]));
  }
  printFigure("exchange.memcpy_gbps_one_thread",
              median(results["mpich_default"]["memcpy_gbps_one_thread"]));
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK("exchange",
                        "the ranks' transpose between 2 ranks on this host per MPICH/UCX "
                        "setting: Gb/s, fraction of memcpy, CPU per GB, CPU while waiting",
                        exchange);

}  // namespace rtcp::observe::bench
