#include "rtcp/InputRecordingSettings.h"

#include <filesystem>
#include <vector>

#include "SettingsReaders.h"

namespace rtcp {

InputRecordingSettings InputRecordingSettings::fromParset(const Parset& p,
                                                          const std::string& baseDirectory) {
  InputRecordingSettings r;
  std::vector<ParsetWarning> warnings;
  settings::Problems problems(p, warnings);
  problems.guard([&] { r.directory = p.getString("Rtcp.recordInput.directory", ""); });
  problems.guard([&] {
    r.maxGB = p.getDouble("Rtcp.recordInput.maxGB", 0.0);
    if (!(r.maxGB >= 0)) p.fail("Rtcp.recordInput.maxGB", "must not be negative");
  });
  problems.guard([&] {
    r.bufferMB = p.getDouble("Rtcp.recordInput.bufferMB", 256.0);
    if (!(r.bufferMB >= 1 && r.bufferMB <= 65536))
      p.fail("Rtcp.recordInput.bufferMB", "must lie in 1..65536 (MiB)");
  });
  problems.raise();
  if (r.enabled() && r.directory[0] != '/' && !baseDirectory.empty())
    r.directory = (std::filesystem::path(baseDirectory) / r.directory).lexically_normal().string();
  return r;
}

std::string InputRecordingSettings::parsetLines() const {
  if (!enabled()) return "";
  return "Rtcp.recordInput.directory = " + settings::quoted(directory) +
         "\nRtcp.recordInput.maxGB = " + settings::formatNumber(maxGB) +
         "\nRtcp.recordInput.bufferMB = " + settings::formatNumber(bufferMB) + "\n";
}

}  // namespace rtcp
