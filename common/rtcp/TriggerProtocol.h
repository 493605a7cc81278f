#pragma once
/// \file TriggerProtocol.h
/// The request of a triggered dump and ionproc's answer (DESIGN §2.4, "Triggered dumps"):
/// over a TCP connection to ionproc's trigger port (ionproc --trigger; its status file's
/// `trigger` key), after the connection handshake (Handshake.h, purpose trigger, the
/// observation's secret), the asker sends one request and ionproc, once the dump is
/// written, one answer; then it closes the connection. Both are text, one item a line,
/// ending with a line `end`, at most kMaxMessageBytes:
///
///   rtcp-trigger-request 1          rtcp-trigger-answer 1
///   from 1764312345.5               status complete | partial | refused
///   to 1764312347.5                 error TEXT                (refused: why)
///   station CS001LBA   (0 or more)  blocks FIRST COUNT        (the observation's blocks)
///   directory /abs/dir              leadin BLOCKS             (before FIRST, for the beam former)
///   end                             samples FIRST END         (dumped, margins included)
///                                   recording FIELD K PACKETS BYTES NOTRECORDED PATH
///                                   gap FIELD K FIRST END WHY (what the dump lacks)
///                                   end
///
/// Times are UTC Unix seconds; samples absolute sample numbers (SampleTime.h). No
/// station line: every station the ionproc serves. `partial`: a part of the window had
/// left the buffer (a `gap ... gone from the buffer` line says which) or could not be
/// written.

#include <cstdint>
#include <string>
#include <vector>

#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp {

struct TriggerRequest {
  double from = 0, to = 0;            ///< UTC, Unix seconds
  std::vector<std::string> stations;  ///< antenna field names; empty: all served
  std::string directory;              ///< absolute, where the recordings go

  std::string format() const;
  /// std::runtime_error naming the line of a malformed request.
  static TriggerRequest parse(const std::string& text);
};

struct TriggerAnswer {
  struct Recording {
    std::string station;
    int stream = 0;
    uint64_t packets = 0, bytes = 0, notRecorded = 0;
    std::string path;
  };
  struct Gap {
    std::string station;
    int stream = 0;
    int64_t firstSample = 0, endSample = 0;
    std::string why;
    /// "CS001LBA stream 0 FROM .. TO UTC: why" (FROM, TO: formatUtc)
    std::string describe(const SampleClock& clock) const;
  };
  std::string status = "refused";  ///< complete, partial, refused
  std::string error;               ///< why refused
  int64_t firstBlock = 0, nrBlocks = 0;
  int64_t leadInBlocks = 0;  ///< dumped before firstBlock for the beam former's state
  int64_t firstSample = 0, endSample = 0;
  std::vector<Recording> recordings;
  std::vector<Gap> gaps;

  std::string format() const;
  static TriggerAnswer parse(const std::string& text);
};

/// rtcp-trigger's record of a dump, beside its dump.parset: the ionprocs' answers merged
/// into one (TriggerAnswer::format; status `partial` also when an ionproc did not answer,
/// then an `error` line says which). observe reads it for the summary.
constexpr const char* kDumpAnswerFile = "dump.answer";

constexpr size_t kMaxTriggerMessageBytes = 1 << 20;

/// Reads one message (through its `end` line); StreamError when the stream ends first
/// or the message is longer than kMaxTriggerMessageBytes.
std::string readTriggerMessage(Stream& stream);

}  // namespace rtcp
