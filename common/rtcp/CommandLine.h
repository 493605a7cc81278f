#pragma once
/// \file CommandLine.h
/// The command line of every rtcp executable: named options plus one positional
/// argument (PARSET, SCHEDULE), parsed with Boost.Program_options.

#include <boost/program_options.hpp>
#include <string>

namespace rtcp {

/// Parses argv against `options` (which should hold "help,h") and one positional
/// argument stored in `positional`. On --help prints `options` and `about` to standard
/// output (unless printHelp is false: MPI ranks other than 0) and returns false. Throws
/// boost::program_options::error for unknown or bad options and when the positional argument (named
/// `positionalName` in the message, e.g. "PARSET") is missing.
bool parseCommandLine(int argc, char** argv,
                      const boost::program_options::options_description& options,
                      const std::string& positionalName, std::string& positional,
                      const std::string& about = "",
                      boost::program_options::variables_map* values = nullptr,
                      bool printHelp = true);

}  // namespace rtcp
