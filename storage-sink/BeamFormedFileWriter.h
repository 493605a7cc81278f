#pragma once
/// \file BeamFormedFileWriter.h
/// One of LOFAR's beam-formed HDF5 files (ICD 3), as COBALT's OutputProc (MSWriterDAL)
/// writes it with the DAL: `<name>.h5` holds the groups and attributes
/// (/SUB_ARRAY_POINTING_<sap>/BEAM_<tab>/STOKES_<component> and their COORDINATES), and the
/// samples of data set STOKES_<component> lie in `<name>.raw` beside it as HDF5 external
/// storage: contiguous little-endian float32 rows [time][subband × channel], time
/// extendible. Beyond COBALT, data set WEIGHT_<component> beside it (same shape, inside the
/// .h5) holds the fraction of valid input samples behind each value (0 where a block or a
/// subband was lost); COBALT writes lost data as unflagged zeros.
///
/// Rows go to the .raw with pwrite() at their place, and their valid fractions likewise to
/// `<name>.weight.raw`, WEIGHT_<component>'s external storage (a block never received stays
/// a hole that reads as zeros: nothing valid); sync() puts what was written on the disk
/// (its caller batches it: BeamFormedWriter); the .h5 is made and flushed at the start and
/// touched again only at finish(), which sets the time length, NOF_SAMPLES and the end
/// times. So a sink killed while it writes leaves a .h5 that opens and .raw files that hold
/// every row written (a write interrupted by the kill: its valid fractions follow its
/// samples, so a value marked valid is there). Made again for the same run (a restarted
/// storage-sink: the same RTCP_RUN_ID, a root attribute beyond COBALT's), an existing file
/// is reopened and continued, never truncated; one of another run is refused.
///
/// Times: the beam former's output is late by beamFormedDelay() subband samples (the
/// coherent dedispersion's latency and the final filter bank's group delay,
/// rtcp/BeamFormedTiming.h). The file takes out the whole output samples of it: block b's
/// rows go to rows b × samplesPerBlock() − rowShift() on (the first rowShift() rows of the
/// observation, the dedispersion's start-up with valid fraction 0, are not written, and
/// the file ends rowShift() rows before the last block's end), and what remains, less than
/// one output sample, is the time coordinate's REFERENCE_VALUE: row n holds the sky's
/// signal at the reference position from REF_TIME_VALUE (the observation's first sample)
/// + REFERENCE_VALUE + n × INCREMENT on, for INCREMENT (SAMPLING_TIME) seconds.
/// Not thread-safe: one writer thread per file (BeamFormedWriter; sync() may run on another
/// thread while that one waits for it).

#include <cstdint>
#include <span>
#include <string>

#include "BeamFormedHoldings.h"
#include "Hdf5Attributes.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::storage {

class BeamFormedFileWriter {
 public:
  /// Creates `<directory>/<filename>` (.h5) and its .raw files for file `fileIndex` of
  /// settings.beamFormed.files, with every attribute (lengths as planned until finish()),
  /// and runId (ObservationSecret::runId; "": none) as RTCP_RUN_ID; or, when the .h5 is
  /// there, reopens it to continue: throws std::runtime_error when another run (or no run)
  /// wrote it.
  BeamFormedFileWriter(const ObservationSettings& settings, int fileIndex,
                       const std::string& directory, const std::string& runId = "");
  ~BeamFormedFileWriter();
  BeamFormedFileWriter(const BeamFormedFileWriter&) = delete;
  BeamFormedFileWriter& operator=(const BeamFormedFileWriter&) = delete;

  const BeamFormedFileLayout& layout() const { return layout_; }
  int nrColumns() const { return layout_.nrColumns; }  ///< subbands × channels of a row
  int samplesPerBlock() const { return layout_.samplesPerBlock; }
  /// Rows by which the output's delay moves block rows earlier (see above).
  int64_t rowShift() const { return layout_.rowShift; }
  /// Seconds from the observation's first sample to the start of row 0 (≤ 0, above one
  /// output sample).
  double firstRowOffset() const { return layout_.firstRowOffset; }
  const std::string& h5Path() const { return layout_.h5Path; }
  const std::string& rawPath() const { return layout_.rawPath; }
  const std::string& weightPath() const { return layout_.weightPath; }
  /// Rows the file held when it was opened (0: made now).
  int64_t rowsAtOpen() const { return rowsAtOpen_; }

  /// Where a block to be written lacks subbands (present[subband of the file] false) that
  /// the file held when it was reopened, takes their columns from the file: a block sent
  /// again after a restart in part only never overwrites what the killed sink wrote.
  void keepWhatIsOnDisk(int64_t block, std::span<float> samples, std::span<float> validFraction,
                        const std::vector<bool>& present) const;
  /// Writes block `block`: samples[sample][column] and validFraction[sample][column], each
  /// samplesPerBlock() × nrColumns() values.
  void writeBlock(int64_t block, std::span<const float> samples,
                  std::span<const float> validFraction);
  /// Syncs the rows written so far to disk (fdatasync of the .raw, then of the .weight.raw;
  /// the first time also the .h5, made or reopened, and its directory, so that a crash of
  /// the host keeps a file that opens). Throws std::runtime_error when the disk refuses.
  void sync();
  /// Sets the time length to the end of the last block written, NOF_SAMPLES and the end
  /// times, and closes both files. Called by the destructor when not called before.
  void finish();
  /// Rows written so far (through the last block written).
  int64_t nrRows() const { return rows_; }
  /// Bytes of samples and weights written.
  uint64_t bytesWritten() const { return bytes_; }

 private:
  void writeRootAttributes(const ObservationSettings& s);
  void writeSapAttributes(const ObservationSettings& s, hid_t sap);
  void writeBeamAttributes(const ObservationSettings& s, hid_t beam);
  void writeCoordinates(const ObservationSettings& s, hid_t beam);
  void createDataSets(hid_t beam);
  void create(const ObservationSettings& s);
  /// Opens the existing .h5 to continue it; false when it does not open and nothing was
  /// written (it is removed, to be made again). Throws for another run's file.
  bool reopen(const std::string& runId);
  void setLengths(int64_t rows);

  const BeamFormedFile file_;
  const TabSettings tab_;
  const StokesSettings stokes_;
  const BeamFormedFileLayout layout_;
  const double startTime_;
  const double samplingTime_;
  int raw_ = -1, weightRaw_ = -1;
  hdf5::Handle h5_, sap_, beam_, samples_, weights_;
  int64_t rows_ = 0;
  int64_t rowsAtOpen_ = 0;
  uint64_t bytes_ = 0;
  bool finished_ = false;
  bool h5Synced_ = false;  ///< the .h5 and its directory synced (sync())
};

/// "2026-11-22T20:00:00.000000000Z" (COBALT's UTC attributes).
std::string formatIsoUtc(double unixTime);
/// Modified Julian Date of a Unix time (days).
double toMjd(double unixTime);

}  // namespace rtcp::storage
