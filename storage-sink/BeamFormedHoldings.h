#pragma once
/// \file BeamFormedHoldings.h
/// Where a beam-formed file's blocks lie (BeamFormedFileLayout: its paths and rows), and
/// what of them is on disk (readBeamFormedHoldings): read back from the file's valid
/// fractions, so that storage-sink's report and observe's summary count what the file
/// holds, whatever happened to the sink that wrote it (killed, restarted), as
/// MeasurementSetHoldings does for MSs.

#include <cstdint>
#include <string>
#include <utility>

#include "rtcp/ObservationSettings.h"

namespace rtcp::storage {

/// One file of settings.beamFormed.files in a directory: its paths and the rows of its
/// blocks (BeamFormedFileWriter.h: block b's rows lie at b × samplesPerBlock − rowShift on).
struct BeamFormedFileLayout {
  BeamFormedFileLayout(const ObservationSettings& settings, int fileIndex,
                       const std::string& directory);

  std::string h5Path;      ///< the HDF5 file: groups, attributes, the data sets' shapes
  std::string rawPath;     ///< STOKES_<n>'s samples, float32 [time][subband × channel]
  std::string weightPath;  ///< WEIGHT_<n>'s valid fractions, the same shape
  int nrSubbands = 0;
  int nrChannels = 0;
  int nrColumns = 0;  ///< subbands × channels of a row
  int samplesPerBlock = 0;
  int64_t rowShift = 0;       ///< whole output samples of the beam former's delay
  double firstRowOffset = 0;  ///< seconds from the first sample to row 0 (≤ 0)
  int64_t plannedRows = 0;    ///< rows of the whole observation
  /// Block b's rows in the file, [first, end): empty when the delay moves it before row 0.
  std::pair<int64_t, int64_t> rowsOf(int64_t block) const;
  size_t rowBytes() const { return size_t(nrColumns) * sizeof(float); }
};

/// What a beam-formed file holds of its blocks: a subband of a block is held when one of
/// its values has a valid fraction above 0 (written; what was lost, or never written, is 0).
struct BeamFormedHoldings {
  int64_t rows = 0;               ///< rows in the file (the shorter of its two .raw files)
  int64_t blocks = 0;             ///< blocks of which a subband is held
  int64_t subbandBlocksLost = 0;  ///< (subband, block) pairs of the observation not held
  uint64_t bytes = 0;             ///< bytes of samples and weights (rows × row × 2)
  /// [block]: subbands held (a block the delay moves wholly before row 0 counts as held
  /// when the file holds a row)
  std::vector<int> subbandsHeld;
};

/// Reads the valid fractions of `blocks` blocks (nrProcessedBlocks) of a file from its
/// weight .raw (one row per block when all its subbands are there). A file not there holds
/// nothing. Throws std::runtime_error when it cannot be read.
BeamFormedHoldings readBeamFormedHoldings(const BeamFormedFileLayout& layout, int64_t blocks);

}  // namespace rtcp::storage
