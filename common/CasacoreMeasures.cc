#include "rtcp/CasacoreMeasures.h"

#include <cmath>

namespace rtcp {
namespace {

constexpr double kUnixEpochMjd = 40587.0;
constexpr double kSecondsPerDay = 86400.0;

}  // namespace

casacore::MEpoch toEpoch(double unixTime) {
  const double days = unixTime / kSecondsPerDay;
  const double wholeDays = std::floor(days);
  const double fraction = (unixTime - wholeDays * kSecondsPerDay) / kSecondsPerDay;
  return casacore::MEpoch(casacore::MVEpoch(wholeDays + kUnixEpochMjd, fraction),
                          casacore::MEpoch::UTC);
}

double toUnixTime(const casacore::MEpoch& epoch) {
  casacore::MEpoch utc = epoch;
  if (epoch.getRefPtr()->getType() != casacore::MEpoch::UTC)
    utc = casacore::MEpoch::Convert(epoch, casacore::MEpoch::UTC)();
  const casacore::MVEpoch& value = utc.getValue();
  return (value.getDay() - kUnixEpochMjd) * kSecondsPerDay +
         value.getDayFraction() * kSecondsPerDay;
}

}  // namespace rtcp
