#pragma once
/// \file LocalRankEnvironment.h
/// The MPICH/UCX settings observe gives correlator ranks that all run on this machine
/// (`mpirun -np N` of a local observation), chosen by `rtcp-bench exchange`
/// (observe/README.md, "Ranks on one machine"). A setting already in observe's own
/// environment is left as the operator set it.

#include <string>
#include <vector>

namespace rtcp::observe {

/// NAME=value settings for local ranks, those observe's environment does not set already.
std::vector<std::string> localRankEnvironment();

/// `command` run through /usr/bin/env with the local ranks' settings (unchanged when none).
std::vector<std::string> withLocalRankEnvironment(std::vector<std::string> command);

}  // namespace rtcp::observe
