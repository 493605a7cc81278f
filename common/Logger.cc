#include "rtcp/Logger.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>

namespace rtcp {
namespace {

std::atomic<int> gLevel{int(LogLevel::kInfo)};
std::mutex gMutex;
std::string gProcessName = "rtcp";

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void Logger::setLevel(LogLevel level) { gLevel = int(level); }
LogLevel Logger::level() { return LogLevel(gLevel.load()); }

void Logger::setProcessName(const std::string& name) {
  std::lock_guard lock(gMutex);
  gProcessName = name;
}

void Logger::write(LogLevel level, const std::string& component, const std::string& message) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  gmtime_r(&now.tv_sec, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &utc);
  std::lock_guard lock(gMutex);
  std::fprintf(stderr, "%s.%03ld %s[%d] %-5s %s: %s\n", stamp, now.tv_nsec / 1000000,
               gProcessName.c_str(), int(getpid()), levelName(level), component.c_str(),
               message.c_str());
  std::fflush(stderr);
}

bool RateLimiter::allow() {
  const int64_t now = nowNs();
  int64_t last = lastNs_.load();
  if (now - last >= int64_t(intervalSeconds_ * 1e9) && lastNs_.compare_exchange_strong(last, now))
    return true;
  ++suppressed_;
  return false;
}

}  // namespace rtcp
