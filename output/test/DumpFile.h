#pragma once
/// \file DumpFile.h
/// Test support: integrations in a dump file of DESIGN §2.4 blocks (header and payload with
/// its CRC-64, one after another), written by the correlator tests' local mode
/// (correlator/program/test/LocalMode.h) and read back by the tests.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "rtcp/CorrelatedBlock.h"

namespace rtcp::ion::test {

class DumpWriter {
 public:
  /// Creates (or empties) the file; throws std::runtime_error naming it when it cannot.
  DumpWriter(const std::string& path, int64_t observationId);
  /// Appends one integration; throws std::runtime_error naming the file on a failed write.
  void write(const CorrelatedData& integration);
  uint64_t written() const { return written_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int64_t observationId_;
  std::ofstream file_;
  uint64_t written_ = 0;
};

/// The integrations of a dump file in the order they were written. Throws
/// std::runtime_error naming the file and block of a bad header, checksum or length.
std::vector<CorrelatedData> readDump(const std::string& path);

}  // namespace rtcp::ion::test
