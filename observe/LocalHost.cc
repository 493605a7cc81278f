#include "LocalHost.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

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

std::vector<std::string> unresolvableHosts(const std::vector<std::string>& hosts,
                                           double timeoutSeconds, size_t* unanswered) {
  std::vector<std::string> distinct;
  for (const std::string& host : hosts)
    if (std::find(distinct.begin(), distinct.end(), host) == distinct.end())
      distinct.push_back(host);
  // getaddrinfo cannot be cancelled: each look-up runs on a detached thread that owns a share
  // of the answers, so one left waiting on a silent DNS server holds nobody up.
  struct Answers {
    std::mutex mutex;
    std::condition_variable changed;
    std::map<std::string, bool> resolves;
  };
  const auto answers = std::make_shared<Answers>();
  for (const std::string& host : distinct)
    std::thread([answers, host] {
      addrinfo hints{};
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      const bool resolves = getaddrinfo(host.c_str(), nullptr, &hints, &found) == 0;
      if (found) freeaddrinfo(found);
      std::lock_guard lock(answers->mutex);
      answers->resolves[host] = resolves;
      answers->changed.notify_all();
    }).detach();
  std::unique_lock lock(answers->mutex);
  answers->changed.wait_for(lock, std::chrono::duration<double>(timeoutSeconds),
                            [&] { return answers->resolves.size() == distinct.size(); });
  std::vector<std::string> failed;
  size_t silent = 0;
  for (const std::string& host : distinct) {
    const auto answer = answers->resolves.find(host);
    if (answer == answers->resolves.end()) ++silent;
    if (answer == answers->resolves.end() || !answer->second) failed.push_back(host);
  }
  if (unanswered) *unanswered = silent;
  return failed;
}

}  // namespace rtcp::observe
