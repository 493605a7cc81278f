#pragma once
/// \file LocalMode.h
/// Test support: the correlator program without ionproc (correlator-local). Each rank
/// reads its stations' inputs itself (recordings or UDP, through the station input's
/// StationInput, input/), integrates and flags its own subbands (ionproc's OutputPath
/// without storage, output/; WorkDistribution keeps an integration on one rank) and writes
/// them to DIR/rank<R>.vis as DESIGN §2.4 blocks (--dump DIR; output/test/DumpFile.h reads
/// them back). It runs the chain, the exchange and the pipeline on recordings with no other
/// process.

#include <memory>
#include <string>
#include <vector>

#include "CorrelatorMain.h"
#include "DumpFile.h"
#include "OutputPath.h"

namespace rtcp::ion {
class StationInput;
}  // namespace rtcp::ion

namespace rtcp::correlator::test {

/// Reads the given stations' inputs itself.
class LocalInputFetcher : public StationBlockFetcher {
 public:
  LocalInputFetcher(const ObservationSettings& settings, const std::vector<int>& stations);
  ~LocalInputFetcher() override;
  const StationBlock& fetch(int64_t block, int station, StationBlock& out) override;
  std::string summary() const override;

 private:
  std::unique_ptr<ion::StationInput> input_;
  int nrSubbands_;
};

/// Integrates (and, as the settings ask, flags) this rank's blocks and appends the
/// integrations to a dump file. It writes no beam-formed data: DumpMode refuses settings
/// that ask for it.
class DumpOutput : public VisibilityOutput {
 public:
  DumpOutput(const ObservationSettings& settings, const std::string& path);
  void write(int subbandIndex, int64_t block, const CorrelatedData& data) override;
  /// Throws std::logic_error: beam-formed outputs were refused.
  void writeBeamFormed(const std::vector<BeamFormedData>& data) override;
  bool finish() override;
  std::string summary() const override;

 private:
  ion::test::DumpWriter dump_;
  ion::OutputPath path_;
};

/// --dump DIR: the local mode's one option (required without --ionproc). Settings with
/// beam-formed outputs are refused (their files are ionproc's and storage-sink's to write).
class DumpMode : public LocalMode {
 public:
  void addOptions(boost::program_options::options_description& options) override;
  void check(bool withIonproc) const override;
  std::unique_ptr<StationBlockFetcher> fetcher(const ObservationSettings& settings,
                                               const std::vector<int>& stations) override;
  std::unique_ptr<VisibilityOutput> output(const ObservationSettings& settings, int rank) override;

 private:
  std::string directory_;
};

}  // namespace rtcp::correlator::test
