#include "rtcp/SampleTime.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace rtcp {
namespace {

/// floor(a / b) for b > 0, also for negative a.
int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

SampleClock::SampleClock(int clockMHz) : clockMHz_(clockMHz) {
  if (clockMHz != 200 && clockMHz != 160)
    throw std::invalid_argument("sample clock must be 200 or 160 MHz, not " +
                                std::to_string(clockMHz));
}

int64_t SampleClock::secondStart(uint32_t timestamp) const {
  // Exact: timestamp * clockHz < 2^32 * 2e8 < 2^63.
  return (int64_t(timestamp) * clockMHz_ * 1000000 + 512) / 1024;
}

int64_t SampleClock::samplesInSecond(uint32_t timestamp) const {
  const int64_t next = (int64_t(timestamp + 1ULL) * clockMHz_ * 1000000 + 512) / 1024;
  return next - secondStart(timestamp);
}

RspStamp SampleClock::stamp(int64_t sample) const {
  const int64_t hz = int64_t(clockMHz_) * 1000000;
  // First guess from the exact rational time, then step to the second that holds it.
  int64_t second = floorDiv(sample * 1024, hz);
  auto start = [&](int64_t s) { return floorDiv(s * hz + 512, 1024); };
  while (start(second + 1) <= sample) ++second;
  while (start(second) > sample) --second;
  return {uint32_t(second), uint32_t(sample - start(second))};
}

int64_t SampleClock::firstSampleAtOrAfter(double unixTime) const {
  // Split into whole seconds (exact integer arithmetic) and a fraction (double), so the
  // rounding of t * fs near 2^48 does not enter. A time within one ulp of unixTime
  // after a sample counts as that sample, so firstSampleAtOrAfter(unixTime(n)) == n.
  // For a whole second this equals secondStart(): at 200 MHz odd seconds fall half a
  // sample before their first sample, which is then the next one (ties go to the sample
  // exactly at the time).
  const double whole = std::floor(unixTime);
  const double fraction = unixTime - whole;  // exact
  const int64_t hz = int64_t(clockMHz_) * 1000000;
  const int64_t scaled = int64_t(whole) * hz;  // sample number * 1024
  const int64_t base = floorDiv(scaled, 1024);
  const double rest = double(scaled - base * 1024) / 1024.0 + fraction * sampleRate();
  const double ulp = std::nextafter(std::abs(unixTime), INFINITY) - std::abs(unixTime);
  const double tolerance = ulp * sampleRate() + 1e-9;
  return base + int64_t(std::ceil(rest - tolerance));
}

double parseUtc(const std::string& text) {
  auto fail = [&](const char* why) {
    return std::invalid_argument("bad UTC time '" + text + "': " + why +
                                 " (expected 'YYYY-MM-DD HH:MM:SS[.fff]')");
  };
  // Fixed layout: digits at these positions, separators between them.
  static const char kLayout[] = "dddd-dd-dd?dd:dd:dd";
  if (text.size() < 19) throw fail("too short");
  for (size_t i = 0; i < 19; ++i) {
    const char c = text[i];
    const char want = kLayout[i];
    const bool ok = want == 'd'   ? std::isdigit(static_cast<unsigned char>(c)) != 0
                    : want == '?' ? (c == ' ' || c == 'T')
                                  : c == want;
    if (!ok) throw fail("unexpected character");
  }
  double fraction = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20) throw fail("trailing text");
    double scale = 0.1;
    for (size_t i = 20; i < text.size(); ++i, scale /= 10) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) throw fail("bad fraction");
      fraction += (text[i] - '0') * scale;
    }
  }
  std::tm tm{};
  auto number = [&](size_t pos, size_t len) { return std::stoi(text.substr(pos, len)); };
  tm.tm_year = number(0, 4) - 1900;
  tm.tm_mon = number(5, 2) - 1;
  tm.tm_mday = number(8, 2);
  tm.tm_hour = number(11, 2);
  tm.tm_min = number(14, 2);
  tm.tm_sec = number(17, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    throw fail("field out of range");
  const std::tm given = tm;
  const time_t seconds = timegm(&tm);
  if (tm.tm_mday != given.tm_mday || tm.tm_mon != given.tm_mon) throw fail("no such date");
  return double(seconds) + fraction;
}

std::string formatUtc(double unixTime) {
  double whole = std::floor(unixTime);
  long micro = std::lround((unixTime - whole) * 1e6);
  if (micro >= 1000000) {
    whole += 1;
    micro -= 1000000;
  }
  const time_t seconds = time_t(whole);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string result = text;
  if (micro != 0) {
    std::snprintf(text, sizeof text, ".%06ld", micro);
    std::string frac = text;
    while (frac.back() == '0') frac.pop_back();
    result += frac;
  }
  return result;
}

}  // namespace rtcp
