#include "rtcp/CommandLine.h"

#include <iostream>

namespace rtcp {

namespace po = boost::program_options;

bool parseCommandLine(int argc, char** argv, const po::options_description& options,
                      const std::string& positionalName, std::string& positional,
                      const std::string& about, po::variables_map* values, bool printHelp) {
  po::options_description all;
  all.add(options).add_options()("positional-argument", po::value(&positional));
  po::positional_options_description order;
  order.add("positional-argument", 1);
  po::variables_map local;
  po::variables_map& vm = values ? *values : local;
  po::store(po::command_line_parser(argc, argv).options(all).positional(order).run(), vm);
  // --help answers before required options are asked for (rtcp-trigger's --from, --to).
  if (vm.count("help")) {
    if (printHelp) std::cout << options << about;
    return false;
  }
  po::notify(vm);
  if (positional.empty()) throw po::error("missing " + positionalName);
  return true;
}

}  // namespace rtcp
