// beamformed-test-writer PARSET DIR: writes every beam-formed file of PARSET into DIR through
// BeamFormedWriter, from data whose every value is known (tBeamFormedFiles.py computes the
// same), with subband 1 of each SAP lost in block 1, and prints one line per file:
// "FILE path rows lost late". The values are whole numbers below 2^24 (exact in float32):
//   sample = ((((tab × 4 + component) × 16 + subband) × 16 + channel) × 8 + row % 8)
//   validFraction = 1 − (channel % 4) / 4 (0 where lost)
// with subband the index in the observation's list and row the file's time row.
#include <iostream>

#include "BeamFormedWriter.h"

using namespace rtcp;

namespace {

constexpr int kLostBlock = 1;
constexpr int kLostSubbandOfSap = 1;

BeamFormedData dataOf(const ObservationSettings& s, int sap, int tab, int subband, int64_t block) {
  const TabSettings& t = s.beamFormed.saps[size_t(sap)].tabs[size_t(tab)];
  const StokesSettings& st = s.beamFormed.stokes(t);
  const int samples = st.outputSamplesPerBlock(s.samplesPerBlock());
  BeamFormedData data(st.kind, st.nrChannels, samples);
  data.sap = sap, data.tab = tab, data.subband = subband, data.block = block;
  for (int k = 0; k < data.nrComponents(); ++k)
    for (int i = 0; i < samples; ++i)
      for (int c = 0; c < st.nrChannels; ++c) {
        const int64_t row = block * samples + i;
        data.sample(k, i, c) = float((((tab * 4 + k) * 16 + subband) * 16 + c) * 8 + row % 8);
      }
  for (int i = 0; i < samples; ++i)
    for (int c = 0; c < st.nrChannels; ++c)
      data.validFraction[size_t(i) * size_t(st.nrChannels) + size_t(c)] = 1.0f - float(c % 4) / 4;
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: beamformed-test-writer PARSET DIR\n";
    return 2;
  }
  try {
    const ObservationSettings s = ObservationSettings::fromFile(argv[1]);
    std::vector<storage::BeamFormedWriter::Target> targets;
    for (size_t f = 0; f < s.beamFormed.files.size(); ++f) targets.push_back({int(f), argv[2]});
    storage::BeamFormedWriter writer(s, targets);
    for (int64_t block = 0; block < s.nrBlocks(); ++block)
      for (size_t sap = 0; sap < s.beamFormed.saps.size(); ++sap) {
        const std::vector<int> subbands = s.subbandsOfBeam(int(sap));
        // Subbands in reverse: a block's rows are complete only when the last arrives.
        for (auto sb = subbands.rbegin(); sb != subbands.rend(); ++sb) {
          if (block == kLostBlock && *sb == subbands.at(kLostSubbandOfSap)) continue;
          for (size_t tab = 0; tab < s.beamFormed.saps[sap].tabs.size(); ++tab)
            writer.accept(dataOf(s, int(sap), int(tab), *sb, block));
        }
      }
    writer.finish();
    for (const storage::BeamFormedFileReport& r : writer.reports())
      std::cout << "FILE " << r.path << " " << r.rows << " " << r.subbandBlocksLost << " "
                << r.subbandBlocksLate << "\n";
  } catch (const std::exception& e) {
    std::cerr << "beamformed-test-writer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
