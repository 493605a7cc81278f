#pragma once
/// \file Logger.h
/// One logger for every part: lines to standard error with UTC time, level and
/// component. Usage: RTCP_LOG_INFO("ionproc", "station " << name << " silent");

#include <atomic>
#include <chrono>
#include <sstream>
#include <string>

namespace rtcp {

enum class LogLevel { kDebug = 0, kInfo, kWarning, kError };

class Logger {
 public:
  static void setLevel(LogLevel level);
  static LogLevel level();
  static void setProcessName(const std::string& name);
  static void write(LogLevel level, const std::string& component, const std::string& message);
};

/// Lets one message through per interval (for rate-limited logging of floods);
/// counts what it suppressed.
class RateLimiter {
 public:
  explicit RateLimiter(double intervalSeconds) : intervalSeconds_(intervalSeconds) {}
  /// True when a message may be logged now; suppressed() tells how many were held back.
  bool allow();
  uint64_t takeSuppressed() { return suppressed_.exchange(0); }

 private:
  double intervalSeconds_;
  std::atomic<int64_t> lastNs_{INT64_MIN / 2};
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace rtcp

#define RTCP_LOG(logLevel, component, expr)                               \
  do {                                                                    \
    if (logLevel >= ::rtcp::Logger::level()) {                            \
      std::ostringstream rtcp_log_stream_;                                \
      rtcp_log_stream_ << expr;                                           \
      ::rtcp::Logger::write(logLevel, component, rtcp_log_stream_.str()); \
    }                                                                     \
  } while (false)
#define RTCP_LOG_DEBUG(component, expr) RTCP_LOG(::rtcp::LogLevel::kDebug, component, expr)
#define RTCP_LOG_INFO(component, expr) RTCP_LOG(::rtcp::LogLevel::kInfo, component, expr)
#define RTCP_LOG_WARN(component, expr) RTCP_LOG(::rtcp::LogLevel::kWarning, component, expr)
#define RTCP_LOG_ERROR(component, expr) RTCP_LOG(::rtcp::LogLevel::kError, component, expr)
