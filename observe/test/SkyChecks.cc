#include "SkyChecks.h"

#include <cppunit/TestAssert.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "FitsImage.h"

namespace rtcp::observe::test {

void placeSourceOffCentre(SmallObservation& o) {
  // The beam transits now, at Dec 45: a 4 s snapshot of a source low in the sky has its
  // baselines foreshortened north-south and a beam so long in that direction (its peak
  // within 0.6 % over +-80") that gridding errors alone move the peak by tens of
  // arcseconds.
  o.beamRa = raTransitingNow();
  o.beamDec = 45 * kDegree;
  o.sourceRa = o.beamRa + 0.6 * kDegree / std::cos(o.beamDec);  // 1 degree away
  o.sourceDec = o.beamDec + 0.8 * kDegree;
}

void checkFringes(const storage::test::MsContents& c, const SmallObservation& o) {
  const double dRa = o.sourceRa - o.beamRa;
  const double l = std::cos(o.sourceDec) * std::sin(dRa);
  const double m = std::sin(o.sourceDec) * std::cos(o.beamDec) -
                   std::cos(o.sourceDec) * std::sin(o.beamDec) * std::cos(dRa);
  const double n = std::sqrt(1 - l * l - m * m);
  constexpr double kSpeedOfLight = 299792458.0;
  double worst = 0;
  for (size_t row = 0; row < c.nrRows; ++row) {
    if (c.antenna1[row] == c.antenna2[row]) continue;
    const auto& [u, v, w] = c.uvw[row];
    std::complex<double> sum = 0;
    for (int ch = 0; ch < c.nrChannels; ++ch) {
      const size_t i = (row * size_t(c.nrChannels) + size_t(ch)) * 4;  // XX
      if (c.flag[i]) continue;
      const double fringe = 2 * M_PI * c.channelFrequencies[size_t(ch)] *
                            (u * l + v * m + w * (n - 1)) / kSpeedOfLight;
      sum += std::complex<double>(c.data[i]) * std::polar(1.0, -fringe);
    }
    worst = std::max(worst, std::abs(std::arg(sum)) / kDegree);
  }
  // Measured 2-3.5 degrees (noise and smearing on the longest baselines); a sign flip
  // gives 179, UVW one second off in time about 40 on the 8 km baselines at 60 MHz.
  std::cerr << "largest fringe phase error " << worst << " degrees\n";
  CPPUNIT_ASSERT_MESSAGE("largest fringe phase error " + std::to_string(worst) + " degrees",
                         worst < 10);
}

void checkImagePeak(const std::vector<std::string>& measurementSets, const SmallObservation& o,
                    const std::string& directory) {
  // Natural weighting, 20" pixels: the longest baseline (RS106, 8.9 km) resolves ~2'.
  const std::string image = directory + "/image";
  std::string command =
      "wsclean -quiet -j 2 -size 512 512 -scale 20asec -weight natural -niter 0 -name " + image;
  for (const std::string& ms : measurementSets) command += " " + ms;
  command += " > " + directory + "/wsclean.log 2>&1";
  CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(directory + "/wsclean.log"), 0,
                               std::system(command.c_str()));
  const rtcp::test::FitsImage fits = rtcp::test::FitsImage::read(image + "-image.fits");
  const rtcp::test::FitsImage::Peak peak = fits.peak();
  const double pixel = 20.0 / 3600 * kDegree;
  const double error = rtcp::test::angularDistance(peak.ra, peak.dec, o.sourceRa, o.sourceDec);
  std::ostringstream where;
  where << "peak at RA " << peak.ra / kDegree << " Dec " << peak.dec / kDegree << ", source at RA "
        << o.sourceRa / kDegree << " Dec " << o.sourceDec / kDegree << ": " << error / pixel
        << " pixels off";
  std::cerr << where.str() << "\n";
  CPPUNIT_ASSERT_MESSAGE(where.str(), error <= pixel);
}

}  // namespace rtcp::observe::test
