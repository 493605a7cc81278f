#include "DumpFile.h"

#include <fstream>
#include <stdexcept>

#include "rtcp/Crc64.h"

namespace rtcp::ion::test {

DumpWriter::DumpWriter(const std::string& path, int64_t observationId)
    : path_(path), observationId_(observationId), file_(path, std::ios::binary | std::ios::trunc) {
  if (!file_) throw std::runtime_error("cannot write the dump file " + path);
}

void DumpWriter::write(const CorrelatedData& integration) {
  const std::vector<uint8_t> bytes = integration.serialise(uint64_t(observationId_));
  file_.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  file_.flush();
  if (!file_) throw std::runtime_error("writing the dump file " + path_ + " failed");
  ++written_;
}

std::vector<CorrelatedData> readDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the dump file " + path);
  std::vector<CorrelatedData> integrations;
  uint8_t headerBytes[kCorrelatedHeaderSize];
  while (in.read(reinterpret_cast<char*>(headerBytes), kCorrelatedHeaderSize)) {
    const CorrelatedHeader header = CorrelatedHeader::read(headerBytes);
    if (auto problem = checkCorrelatedHeader(header))
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) + ": " +
                               *problem);
    std::vector<uint8_t> payload(header.payloadSize);
    if (!in.read(reinterpret_cast<char*>(payload.data()), std::streamsize(payload.size())))
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) +
                               " is truncated");
    if (crc64(payload.data(), payload.size()) != header.payloadCrc)
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) +
                               " fails its CRC-64");
    integrations.push_back(CorrelatedData::fromPayload(header, payload.data()));
  }
  return integrations;
}

}  // namespace rtcp::ion::test
