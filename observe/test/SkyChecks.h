#pragma once
// The sky checks of whole observations (observe_end_to_end_test, observe_hosts_test): a
// point source off the phase centre must show the fringes the MS's own UVW predict on
// every baseline, and WSClean must image it where it is.

#include <string>
#include <vector>

#include "MsReader.h"
#include "ObserveTestUtil.h"

namespace rtcp::observe::test {

/// Points the beam at a direction that transits now at Dec 45 and puts the source 1 degree
/// away from it (0.6 degrees east, 0.8 north): high in the sky for a short --now run.
void placeSourceOffCentre(SmallObservation& o);

/// Every cross-correlation's phase (XX, summed over channels) equals the source's fringe
/// phase 2 pi f (u l + v m + w (n - 1)) / c from the MS's own UVW (DESIGN 2.5 sign),
/// within 10 degrees, on every baseline. Prints the largest error.
void checkFringes(const storage::test::MsContents& ms, const SmallObservation& o);

/// WSClean (natural weighting, 512 x 512 pixels of 20") images the MSs into directory;
/// the brightest pixel lies within one pixel of the source.
void checkImagePeak(const std::vector<std::string>& measurementSets, const SmallObservation& o,
                    const std::string& directory);

}  // namespace rtcp::observe::test
