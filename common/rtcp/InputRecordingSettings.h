#pragma once
/// \file InputRecordingSettings.h
/// Recording ionproc's input as it arrives (Rtcp.recordInput.*, rtcp's own keys, DESIGN
/// §2.2): every station's valid packets, one recording per input stream, written behind
/// the input (input/InputRecorder.h). ObservationSettings::fromParset checks these keys
/// with the others; ionproc reads them from the parset's text.

#include <string>

#include "rtcp/Parset.h"

namespace rtcp {

struct InputRecordingSettings {
  std::string directory;  ///< Rtcp.recordInput.directory; empty: no recording
  /// Rtcp.recordInput.maxGB: the most GB (1e9 bytes) one ionproc writes; 0: 90 % of what
  /// the file system has free when the observation starts
  double maxGB = 0;
  double bufferMB = 256;  ///< Rtcp.recordInput.bufferMB: MiB of chunks between input and disk

  bool enabled() const { return !directory.empty(); }
  /// The keys of a parset; a relative directory lies in baseDirectory. Throws ParsetErrors
  /// naming each bad key.
  static InputRecordingSettings fromParset(const Parset& parset,
                                           const std::string& baseDirectory = "");
  /// The keys as parset lines (none when not enabled).
  std::string parsetLines() const;
};

}  // namespace rtcp
