// libFuzzer target: the parset reader and the settings behind it. Any text must end in
// settings or in a ParsetError naming file, line and key; never a crash, an undefined
// behaviour, a hang, or memory beyond libFuzzer's limit (a bare std::bad_alloc is a
// finding too).
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "FuzzCommon.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rtcp::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtcp;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Parset parset = Parset::fromString(text, "fuzz.parset", SyntaxErrors::kKeep);
    const ObservationSettings s = ObservationSettings::fromParset(parset);
    // What ionproc and storage-sink derive first from the settings.
    fuzz::consume(s.startSample() + s.nrBlocks() + s.nrIntegrations() + s.samplesPerBlock());
    fuzz::consume(s.toParset().toString().size());
  } catch (const ParsetError&) {  // the clear error a user gets
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
