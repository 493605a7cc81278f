#pragma once
/// \file Executables.h
/// Where observe finds the parts it starts: the build tree it was built in (paths
/// compiled in), else PATH.

#include <string>

namespace rtcp::observe {

/// station-sim, ionproc, correlator or storage-sink: the built executable when it
/// exists, else the bare name (looked up in PATH when started).
std::string partExecutable(const std::string& part);
/// MPICH's mpirun (/usr/bin/mpirun, else mpiexec.hydra, else "mpirun" from PATH).
std::string mpirunExecutable();
/// tools/rtcp-inspect of the source tree (or rtcp-inspect in PATH); "" when neither exists.
std::string inspectExecutable();
/// Number of cores of this machine.
int coresOfThisMachine();

}  // namespace rtcp::observe
