#include "LocalMode.h"

#include <boost/program_options.hpp>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "StationInput.h"

namespace rtcp::correlator::test {

namespace po = boost::program_options;

LocalInputFetcher::LocalInputFetcher(const ObservationSettings& settings,
                                     const std::vector<int>& stations)
    : nrSubbands_(settings.nrSubbands()) {
  if (!stations.empty()) {
    input_ = std::make_unique<ion::StationInput>(settings, stations);
    input_->start();
  }
}

LocalInputFetcher::~LocalInputFetcher() {
  if (input_) input_->stop();
}

const StationBlock& LocalInputFetcher::fetch(int64_t block, int station, StationBlock& out) {
  input_->serveInto(out, block, station, 0, nrSubbands_);
  return out;
}

std::string LocalInputFetcher::summary() const {
  if (!input_) return "no stations to read";
  std::ostringstream s;
  for (const ion::StationStatistics& st : input_->statistics())
    s << st.station << ": " << st.packetsAccepted << " packets, " << st.blocksServed
      << " blocks served, " << st.samplesFlagged << " of " << st.samplesServed
      << " samples flagged; ";
  return s.str();
}

namespace {

/// The output path without storage, every integration after flagging into the dump.
ion::OutputPathOptions dumpOnly(ion::test::DumpWriter& dump) {
  ion::OutputPathOptions options;
  options.toStorage = false;
  options.afterFlagging = [&dump](const CorrelatedData& integration) { dump.write(integration); };
  return options;
}

}  // namespace

DumpOutput::DumpOutput(const ObservationSettings& settings, const std::string& path)
    : dump_(path, settings.observationId), path_(settings, dumpOnly(dump_)) {}

void DumpOutput::write(int subbandIndex, int64_t block, const CorrelatedData& data) {
  path_.add(subbandIndex, block, data.nrStations, data.nrChannels, data.visibilities.span(),
            data.validSamples.span());
}

void DumpOutput::writeBeamFormed(const std::vector<BeamFormedData>&) {
  throw std::logic_error("correlator-local: beam-formed data reached the dump output");
}

bool DumpOutput::finish() { return path_.finish(); }

std::string DumpOutput::summary() const {
  std::string text;
  for (const std::string& line : path_.summary()) text += line + "; ";
  return text + std::to_string(dump_.written()) + " integrations written to " + dump_.path();
}

void DumpMode::addOptions(po::options_description& options) {
  options.add_options()(
      "dump", po::value(&directory_),
      "without --ionproc (required then): read the stations' inputs in each "
      "rank, integrate, flag as the parset asks, and write each rank's integrations to "
      "DIR/rank<R>.vis (DESIGN 2.4 blocks)");
}

void DumpMode::check(bool withIonproc) const {
  if (withIonproc && !directory_.empty())
    throw po::error("--dump applies only without --ionproc (ionproc does the output)");
  if (!withIonproc && directory_.empty()) throw po::error("--ionproc or --dump is required");
}

std::unique_ptr<StationBlockFetcher> DumpMode::fetcher(const ObservationSettings& settings,
                                                       const std::vector<int>& stations) {
  return std::make_unique<LocalInputFetcher>(settings, stations);
}

std::unique_ptr<VisibilityOutput> DumpMode::output(const ObservationSettings& settings, int rank) {
  if (settings.beamFormed.enabled())
    throw std::runtime_error(
        "correlator-local writes correlated integrations only: beam-formed outputs "
        "(Observation.DataProducts.Output_CoherentStokes / Output_IncoherentStokes) need "
        "ionproc (--ionproc)");
  std::filesystem::create_directories(directory_);
  return std::make_unique<DumpOutput>(
      settings,
      (std::filesystem::path(directory_) / ("rank" + std::to_string(rank) + ".vis")).string());
}

}  // namespace rtcp::correlator::test
