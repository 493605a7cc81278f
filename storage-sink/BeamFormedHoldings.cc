#include "BeamFormedHoldings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "rtcp/BeamFormedTiming.h"

namespace rtcp::storage {

BeamFormedFileLayout::BeamFormedFileLayout(const ObservationSettings& s, int fileIndex,
                                           const std::string& directory) {
  const BeamFormedFile& file = s.beamFormed.files.at(size_t(fileIndex));
  const TabSettings& tab = s.beamFormed.saps.at(size_t(file.sap)).tabs.at(size_t(file.tab));
  const StokesSettings& stokes = s.beamFormed.stokes(tab);
  nrSubbands = file.nrSubbands;
  nrChannels = stokes.nrChannels;
  nrColumns = nrSubbands * nrChannels;
  samplesPerBlock = stokes.outputSamplesPerBlock(s.samplesPerBlock());
  const int64_t delay = beamFormedDelay(s, tab);
  rowShift = delay / stokes.inputSamplesPerSample();
  firstRowOffset = -double(delay - rowShift * stokes.inputSamplesPerSample()) / s.subbandWidth();
  plannedRows = std::max<int64_t>(0, s.nrBlocks() * samplesPerBlock - rowShift);
  h5Path = (std::filesystem::path(directory) / file.filename).string();
  std::string stem = file.filename;
  if (stem.ends_with(".h5")) stem.resize(stem.size() - 3);
  rawPath = (std::filesystem::path(directory) / (stem + ".raw")).string();
  weightPath = (std::filesystem::path(directory) / (stem + ".weight.raw")).string();
}

std::pair<int64_t, int64_t> BeamFormedFileLayout::rowsOf(int64_t block) const {
  const int64_t first = block * samplesPerBlock - rowShift;
  return {std::max<int64_t>(0, first), std::max<int64_t>(0, first + samplesPerBlock)};
}

namespace {

int64_t rowsIn(const std::string& path, size_t rowBytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  }
  return int64_t(uint64_t(st.st_size) / rowBytes);
}

}  // namespace

BeamFormedHoldings readBeamFormedHoldings(const BeamFormedFileLayout& layout, int64_t blocks) {
  BeamFormedHoldings h;
  h.subbandsHeld.assign(size_t(std::max<int64_t>(0, blocks)), 0);
  h.rows = std::min(rowsIn(layout.rawPath, layout.rowBytes()),
                    rowsIn(layout.weightPath, layout.rowBytes()));
  h.bytes = uint64_t(h.rows) * layout.rowBytes() * 2;
  const int fd = h.rows > 0 ? ::open(layout.weightPath.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (h.rows > 0 && fd < 0)
    throw std::runtime_error("cannot read " + layout.weightPath + ": " + std::strerror(errno));
  std::vector<float> row(size_t(layout.nrColumns));
  std::vector<bool> held(size_t(layout.nrSubbands));
  for (int64_t b = 0; b < blocks; ++b) {
    const auto [first, end] = layout.rowsOf(b);
    int& count = h.subbandsHeld[size_t(b)];
    if (first == end) {
      count = h.rows > 0 ? layout.nrSubbands : 0;  // nothing of it belongs in the file
    } else {
      // Row by row until every subband showed a valid value (the first row, mostly).
      std::fill(held.begin(), held.end(), false);
      for (int64_t r = first; r < std::min(end, h.rows) && count < layout.nrSubbands; ++r) {
        const ssize_t n =
            ::pread(fd, row.data(), layout.rowBytes(), off_t(r) * off_t(layout.rowBytes()));
        if (n != ssize_t(layout.rowBytes())) {
          ::close(fd);
          throw std::runtime_error("cannot read row " + std::to_string(r) + " of " +
                                   layout.weightPath);
        }
        for (int sb = 0; sb < layout.nrSubbands; ++sb) {
          if (held[size_t(sb)]) continue;
          const float* values = row.data() + size_t(sb) * size_t(layout.nrChannels);
          if (std::any_of(values, values + layout.nrChannels, [](float w) { return w > 0; })) {
            held[size_t(sb)] = true;
            ++count;
          }
        }
      }
    }
    h.blocks += count > 0;
    h.subbandBlocksLost += layout.nrSubbands - count;
  }
  if (fd >= 0) ::close(fd);
  return h;
}

}  // namespace rtcp::storage
