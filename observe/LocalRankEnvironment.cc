#include "LocalRankEnvironment.h"

#include <cstdlib>

namespace rtcp::observe {

namespace {

/// UCX's shared-memory transports only between ranks of one machine: without it UCX also
/// opens its TCP and other network transports and polls them in every progress call.
const char* const kSettings[][2] = {{"UCX_TLS", "sm,self"}};

}  // namespace

std::vector<std::string> localRankEnvironment() {
  std::vector<std::string> settings;
  for (const auto& [name, value] : kSettings)
    if (!std::getenv(name)) settings.push_back(std::string(name) + "=" + value);
  return settings;
}

std::vector<std::string> withLocalRankEnvironment(std::vector<std::string> command) {
  const std::vector<std::string> settings = localRankEnvironment();
  if (settings.empty()) return command;
  std::vector<std::string> wrapped{"/usr/bin/env"};
  wrapped.insert(wrapped.end(), settings.begin(), settings.end());
  wrapped.insert(wrapped.end(), command.begin(), command.end());
  return wrapped;
}

}  // namespace rtcp::observe
