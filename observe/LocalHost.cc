#include "LocalHost.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <unistd.h>

#include <cstring>

namespace rtcp::observe {
namespace {

std::string ownHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

/// True when the address text is one of this machine's interface addresses.
bool isInterfaceAddress(const std::string& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* a = list; a && !found; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    found = address == text;
  }
  freeifaddrs(list);
  return found;
}

}  // namespace

bool isLocalHost(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "0.0.0.0" || host.starts_with("127."))
    return true;
  const std::string own = ownHostName();
  if (!own.empty() && (host == own || host.starts_with(own + ".") || own.starts_with(host + ".")))
    return true;
  return isInterfaceAddress(host);
}

}  // namespace rtcp::observe
