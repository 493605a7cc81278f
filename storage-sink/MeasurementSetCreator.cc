#include "MeasurementSetCreator.h"

#include <casacore/casa/Arrays/Cube.h>
#include <casacore/casa/Arrays/Matrix.h>
#include <casacore/ms/MeasurementSets/MSColumns.h>
#include <casacore/tables/DataMan/IncrementalStMan.h>
#include <casacore/tables/DataMan/StManAipsIO.h>
#include <casacore/tables/DataMan/StandardStMan.h>
#include <casacore/tables/DataMan/TiledColumnStMan.h>
#include <casacore/tables/Tables/ArrColDesc.h>
#include <casacore/tables/Tables/ScaColDesc.h>
#include <casacore/tables/Tables/SetupNewTab.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "LofarTables.h"
#include "rtcp/Baselines.h"
#include "rtcp/SampleTime.h"

namespace rtcp::storage {
namespace {

using casacore::IPosition;

constexpr double kSecondsPerYear = 365.25 * 86400;
/// At most this many bytes per DATA tile: below glibc's mmap threshold (128 KiB), so that
/// casacore's tile buffers come from the heap and are reused.
constexpr size_t kTileBytes = 64 << 10;

/// Row 0 of a subband's own table: added when the table is new, overwritten in a copy
/// (rewriteSubbandTables). Removing a StManAipsIO table's row and adding it again costs an
/// allocation of thousands of rows per column, most of a copy's CPU time.
void ensureOneRow(casacore::Table& table) {
  if (table.nrow() == 0) table.addRow();
}

void fixShape(casacore::TableDesc& desc, casacore::MS::PredefinedColumns column,
              const IPosition& shape) {
  desc.rwColumnDesc(casacore::MS::columnName(column)).setShape(shape);
}

casacore::MeasurementSet createMainTable(const std::string& path, int nrChannels, int nrBaselines) {
  casacore::TableDesc desc = casacore::MS::requiredTableDesc();
  const IPosition cell(2, kNrPolarisationProducts, nrChannels);  // [channel][pol] per row
  casacore::MS::addColumnToDesc(desc, casacore::MS::DATA, 2);
  casacore::MS::addColumnToDesc(desc, casacore::MS::WEIGHT_SPECTRUM, 2);
  fixShape(desc, casacore::MS::DATA, cell);
  fixShape(desc, casacore::MS::FLAG, cell);
  fixShape(desc, casacore::MS::WEIGHT_SPECTRUM, cell);
  fixShape(desc, casacore::MS::WEIGHT, IPosition(1, kNrPolarisationProducts));
  fixShape(desc, casacore::MS::SIGMA, IPosition(1, kNrPolarisationProducts));
  // UVW holds J2000 coordinates (as LOFAR's and DP3's writers say; casacore's default is ITRF).
  casacore::TableRecord& uvwKeywords = desc.rwColumnDesc("UVW").rwKeywordSet();
  casacore::TableRecord measure = uvwKeywords.asRecord("MEASINFO");
  measure.define("Ref", "J2000");
  uvwKeywords.defineRecord("MEASINFO", measure);

  casacore::SetupNewTable setup(path, desc, casacore::Table::New);
  casacore::StandardStMan standard("StandardStMan", 32768);
  setup.bindAll(standard);
  // Columns constant over an integration or the whole MS: stored once per change.
  casacore::IncrementalStMan incremental("IncrementalStMan");
  for (auto column : {casacore::MS::TIME, casacore::MS::TIME_CENTROID, casacore::MS::INTERVAL,
                      casacore::MS::EXPOSURE, casacore::MS::FEED1, casacore::MS::FEED2,
                      casacore::MS::DATA_DESC_ID, casacore::MS::FIELD_ID, casacore::MS::ARRAY_ID,
                      casacore::MS::OBSERVATION_ID, casacore::MS::PROCESSOR_ID,
                      casacore::MS::SCAN_NUMBER, casacore::MS::STATE_ID})
    setup.bindColumn(casacore::MS::columnName(column), incremental);
  // Tiles of the same rows in every column (MainTableTiling). The small per-row arrays
  // are tiled too (as DP3 does for UVW): the StandardStMan stores fixed-shape arrays row
  // by row.
  const int rows = mainTableTiling(nrChannels, nrBaselines).rowsPerTile;
  const IPosition tile(3, kNrPolarisationProducts, nrChannels, rows);
  casacore::TiledColumnStMan tiledData("TiledData", tile);
  casacore::TiledColumnStMan tiledFlag("TiledFlag", tile);
  casacore::TiledColumnStMan tiledWeight("TiledWeightSpectrum", tile);
  casacore::TiledColumnStMan tiledUvw("TiledUVW", IPosition(2, 3, rows));
  casacore::TiledColumnStMan tiledRowWeight("TiledWeight",
                                            IPosition(2, kNrPolarisationProducts, rows));
  casacore::TiledColumnStMan tiledSigma("TiledSigma", IPosition(2, kNrPolarisationProducts, rows));
  setup.bindColumn(casacore::MS::columnName(casacore::MS::DATA), tiledData);
  setup.bindColumn(casacore::MS::columnName(casacore::MS::FLAG), tiledFlag);
  setup.bindColumn(casacore::MS::columnName(casacore::MS::WEIGHT_SPECTRUM), tiledWeight);
  setup.bindColumn(casacore::MS::columnName(casacore::MS::UVW), tiledUvw);
  setup.bindColumn(casacore::MS::columnName(casacore::MS::WEIGHT), tiledRowWeight);
  setup.bindColumn(casacore::MS::columnName(casacore::MS::SIGMA), tiledSigma);
  return casacore::MeasurementSet(setup);
}

/// Every subtable, as MeasurementSet::createDefaultSubtables makes them but with LOFAR's
/// columns in ANTENNA, FIELD and OBSERVATION (added at creation: later additions cost a
/// rewrite each), and LOFAR's own subtables.
void createSubtables(casacore::MeasurementSet& ms, const std::string& tileBeamType) {
  casacore::TableDesc antenna = casacore::MSAntenna::requiredTableDesc();
  antenna.addColumn(casacore::ScalarColumnDesc<casacore::String>(
      "LOFAR_STATION_TYPE", "CORE, REMOTE, INTERNATIONAL or SUPERSTATION"));
  addLofarAntennaColumns(antenna);
  casacore::TableDesc field = casacore::MSField::requiredTableDesc();
  addLofarFieldColumns(field, tileBeamType);
  casacore::TableDesc observation = casacore::MSObservation::requiredTableDesc();
  addLofarObservationColumns(observation);
  const std::pair<casacore::MS::PredefinedKeywords, casacore::TableDesc> subtables[] = {
      {casacore::MS::ANTENNA, antenna},
      {casacore::MS::DATA_DESCRIPTION, casacore::MSDataDescription::requiredTableDesc()},
      {casacore::MS::FEED, casacore::MSFeed::requiredTableDesc()},
      {casacore::MS::FLAG_CMD, casacore::MSFlagCmd::requiredTableDesc()},
      {casacore::MS::FIELD, field},
      {casacore::MS::HISTORY, casacore::MSHistory::requiredTableDesc()},
      {casacore::MS::OBSERVATION, observation},
      {casacore::MS::POINTING, casacore::MSPointing::requiredTableDesc()},
      {casacore::MS::POLARIZATION, casacore::MSPolarization::requiredTableDesc()},
      {casacore::MS::PROCESSOR, casacore::MSProcessor::requiredTableDesc()},
      {casacore::MS::SPECTRAL_WINDOW, casacore::MSSpectralWindow::requiredTableDesc()},
      {casacore::MS::STATE, casacore::MSState::requiredTableDesc()},
  };
  // The subband's own tables, which a copy rewrites (rewriteSubbandTables), in
  // StManAipsIO: casacore's StandardStMan fsyncs at every flush of a changed table, five
  // fsyncs per copy.
  const casacore::MS::PredefinedKeywords subbandTables[] = {
      casacore::MS::FIELD, casacore::MS::SPECTRAL_WINDOW, casacore::MS::DATA_DESCRIPTION,
      casacore::MS::OBSERVATION, casacore::MS::PROCESSOR};
  for (const auto& [keyword, desc] : subtables) {
    const casacore::String name = casacore::MS::keywordName(keyword);
    casacore::SetupNewTable setup(ms.tableName() + "/" + name, desc, casacore::Table::New);
    casacore::StManAipsIO inMemory;
    if (std::find(std::begin(subbandTables), std::end(subbandTables), keyword) !=
        std::end(subbandTables))
      setup.bindAll(inMemory);
    ms.rwKeywordSet().defineTable(name, casacore::Table(setup));
  }
  createLofarSubtables(ms);
  ms.initRefs();
}

void fillAntennas(casacore::MeasurementSet& ms, const std::vector<MsStation>& stations) {
  casacore::MSAntenna& table = ms.antenna();
  table.addRow(stations.size());
  casacore::MSAntennaColumns columns(table);
  casacore::ScalarColumn<casacore::String> type(table, "LOFAR_STATION_TYPE");
  casacore::ScalarColumn<casacore::Int> stationId(table, "LOFAR_STATION_ID");
  casacore::ArrayColumn<double> phaseReference(table, "LOFAR_PHASE_REFERENCE");
  for (size_t i = 0; i < stations.size(); ++i) {
    const MsStation& s = stations[i];
    const casacore::Vector<double> position{s.position[0], s.position[1], s.position[2]};
    columns.name().put(i, s.name);
    columns.station().put(i, "LOFAR");
    columns.type().put(i, "GROUND-BASED");
    columns.mount().put(i, "X-Y");
    columns.position().put(i, position);
    columns.offset().put(i, casacore::Vector<double>(3, 0.0));
    columns.dishDiameter().put(i, s.dishDiameter);
    columns.flagRow().put(i, false);
    type.put(i, s.type);
    stationId.put(i, s.lofarStationId);
    phaseReference.put(i, position);  // the stations are phased up to their positions
  }
}

void fillFeeds(casacore::MeasurementSet& ms, size_t nrStations) {
  casacore::MSFeed& table = ms.feed();
  table.addRow(nrStations);
  casacore::MSFeedColumns columns(table);
  casacore::Vector<casacore::String> receptors{"X", "Y"};
  casacore::Matrix<casacore::Complex> response(2, 2, casacore::Complex(0));
  response(0, 0) = response(1, 1) = casacore::Complex(1);
  for (size_t i = 0; i < nrStations; ++i) {
    columns.antennaId().put(i, int(i));
    columns.feedId().put(i, 0);
    columns.spectralWindowId().put(i, -1);
    columns.time().put(i, 0.0);
    columns.interval().put(i, 1e30);
    columns.numReceptors().put(i, 2);
    columns.beamId().put(i, -1);
    columns.beamOffset().put(i, casacore::Matrix<double>(2, 2, 0.0));
    columns.polarizationType().put(i, receptors);
    columns.polResponse().put(i, response);
    columns.position().put(i, casacore::Vector<double>(3, 0.0));
    columns.receptorAngle().put(i, casacore::Vector<double>{-M_PI / 4, M_PI / 4});
  }
}

/// The beam's direction in its own frame (J2000, AZELGEO, SUN, ...), as LOFAR writes it.
void fillField(casacore::MSField& table, const MeasurementSetDescription& d, double startMjd) {
  casacore::MSFieldColumns columns(table);
  casacore::MDirection::Types type;
  if (!casacore::MDirection::getType(type, d.directionType))
    throw std::invalid_argument("unknown direction type '" + d.directionType + "'");
  if (table.nrow() == 0) columns.setDirectionRef(type);  // before the first row (a copy: equal)
  ensureOneRow(table);
  casacore::Matrix<double> direction(2, 1);
  direction(0, 0) = d.ra;
  direction(1, 0) = d.dec;
  columns.name().put(0, beamFieldName(d.beam));
  columns.code().put(0, "");
  columns.time().put(0, startMjd);
  columns.numPoly().put(0, 0);
  columns.delayDir().put(0, direction);
  columns.phaseDir().put(0, direction);
  columns.referenceDir().put(0, direction);
  columns.sourceId().put(0, -1);
  columns.flagRow().put(0, false);
  casacore::ArrayColumn<double>(table, "LOFAR_TILE_BEAM_DIR")
      .put(0, casacore::Vector<double>{d.tileBeam.angle1, d.tileBeam.angle2});
}

void fillPolarization(casacore::MeasurementSet& ms) {
  casacore::MSPolarization& table = ms.polarization();
  table.addRow();
  casacore::MSPolarizationColumns columns(table);
  casacore::Matrix<int> products(2, kNrPolarisationProducts);
  for (int p = 0; p < kNrPolarisationProducts; ++p) {
    products(0, p) = p / 2;  // XX XY YX YY
    products(1, p) = p % 2;
  }
  columns.numCorr().put(0, kNrPolarisationProducts);
  columns.corrType().put(0, casacore::Vector<int>{9, 10, 11, 12});
  columns.corrProduct().put(0, products);
  columns.flagRow().put(0, false);
}

void fillSpectralWindow(casacore::MSSpectralWindow& table, casacore::MSDataDescription& description,
                        const MeasurementSetDescription& d) {
  const int nrChannels = d.nrChannels();
  casacore::Vector<double> frequencies(nrChannels), widths(nrChannels, d.channelWidth);
  for (int c = 0; c < nrChannels; ++c) frequencies[c] = d.channelFrequencies[size_t(c)];
  ensureOneRow(table);
  casacore::MSSpWindowColumns columns(table);
  columns.name().put(0,
                     "SB-" + std::to_string(d.subbandIndex));  // LOFAR: the index, not the number
  columns.numChan().put(0, nrChannels);
  columns.refFrequency().put(0, d.subbandFrequency);
  columns.chanFreq().put(0, frequencies);
  columns.chanWidth().put(0, widths);
  columns.effectiveBW().put(0, widths);
  columns.resolution().put(0, widths);
  columns.measFreqRef().put(0, casacore::MFrequency::TOPO);
  columns.totalBandwidth().put(0, nrChannels * d.channelWidth);
  columns.netSideband().put(0, 1);
  columns.ifConvChain().put(0, 0);
  columns.freqGroup().put(0, 0);
  columns.freqGroupName().put(0, "");
  columns.flagRow().put(0, false);

  ensureOneRow(description);
  casacore::MSDataDescColumns descriptionColumns(description);
  descriptionColumns.spectralWindowId().put(0, 0);
  descriptionColumns.polarizationId().put(0, 0);
  descriptionColumns.flagRow().put(0, false);
}

void fillObservation(casacore::MSObservation& table, casacore::MSProcessor& processor,
                     const MeasurementSetDescription& d, const std::string& path) {
  const double start = unixToMjdSeconds(d.startTime), stop = unixToMjdSeconds(d.stopTime);
  ensureOneRow(table);
  casacore::MSObservationColumns columns(table);
  columns.telescopeName().put(0, "LOFAR");
  columns.timeRange().put(0, casacore::Vector<double>{start, stop});
  columns.observer().put(0, "unknown");  // as LOFAR: the people are in LOFAR_PROJECT_*
  columns.project().put(0, d.campaign.name);
  columns.scheduleType().put(0, "LOFAR");
  columns.schedule().put(0, casacore::Vector<casacore::String>(1, ""));
  columns.log().put(0, casacore::Vector<casacore::String>(1, ""));
  columns.releaseDate().put(0, stop + kSecondsPerYear);  // LOFAR: a year after the end
  columns.flagRow().put(0, false);
  fillLofarObservation(table, d, std::filesystem::path(path).filename().string());

  ensureOneRow(processor);
  casacore::MSProcessorColumns processorColumns(processor);
  processorColumns.type().put(0, "CORRELATOR");
  processorColumns.subType().put(0, "rtcp");
  processorColumns.typeId().put(0, 0);
  processorColumns.modeId().put(0, 0);
  processorColumns.flagRow().put(0, false);
}

void fillHistory(casacore::MeasurementSet& ms, const std::string& parsetText, double startMjd) {
  std::vector<std::string> lines;
  std::istringstream text(parsetText);
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  if (lines.empty()) lines.push_back("");
  casacore::MSHistory& table = ms.history();
  table.addRow();
  casacore::MSHistoryColumns columns(table);
  columns.time().put(0, startMjd);
  columns.observationId().put(0, 0);
  columns.message().put(0, "parset");
  columns.priority().put(0, "NORMAL");
  columns.origin().put(0, "rtcp storage-sink");
  columns.objectId().put(0, 0);
  columns.application().put(0, "storage-sink");
  columns.cliCommand().put(0, casacore::Vector<casacore::String>(1, "storage-sink"));
  casacore::Vector<casacore::String> parameters(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) parameters[i] = lines[i];
  columns.appParams().put(0, parameters);
}

}  // namespace

MainTableTiling mainTableTiling(int nrChannels, int nrBaselines) {
  const size_t rowBytes = size_t(kNrPolarisationProducts) * nrChannels * sizeof(casacore::Complex);
  const int baselines = std::max(nrBaselines, 1);
  const size_t integrationBytes = rowBytes * size_t(baselines);
  MainTableTiling tiling;
  if (integrationBytes <= kTileBytes) {  // whole integrations per tile
    tiling.integrationsPerRun = int(std::min<size_t>(kTileBytes / integrationBytes, 64));
    tiling.rowsPerTile = baselines * tiling.integrationsPerRun;
  } else {  // the largest whole fraction of an integration that fits
    for (int rows = int(std::min<size_t>(kTileBytes / rowBytes, size_t(baselines))); rows >= 1;
         --rows)
      if (baselines % rows == 0) {
        tiling.rowsPerTile = rows;
        break;
      }
  }
  return tiling;
}

casacore::MeasurementSet createMeasurementSet(const std::string& path,
                                              const MeasurementSetDescription& d, bool sync) {
  casacore::MeasurementSet ms = createMainTable(path, d.nrChannels(), nrBaselines(d.nrStations()));
  createSubtables(ms, d.tileBeam.directionType);
  ms.rwKeywordSet().define(kRunIdKeyword, casacore::String(d.runId));
  const double startMjd = unixToMjdSeconds(d.startTime);
  fillAntennas(ms, d.stations);
  fillFeeds(ms, d.stations.size());
  fillField(ms.field(), d, startMjd);
  fillPolarization(ms);
  fillSpectralWindow(ms.spectralWindow(), ms.dataDescription(), d);
  fillObservation(ms.observation(), ms.processor(), d, path);
  fillHistory(ms, d.parsetText, startMjd);
  if (d.antennaFields) fillLofarSubtables(ms, *d.antennaFields);
  closeLofarSubtables(ms);
  ms.flush(sync);
  return ms;
}

void rewriteSubbandTables(const std::string& path, const MeasurementSetDescription& d) {
  // Only these subtables are opened (opening a whole MS opens all sixteen); their one row
  // is overwritten, every cell of it (the fill functions put every column).
  const auto open = [&](casacore::MS::PredefinedKeywords subtable) {
    casacore::Table table(path + "/" + std::string(casacore::MS::keywordName(subtable)),
                          casacore::TableLock(casacore::TableLock::NoLocking),
                          casacore::Table::Update);
    if (table.nrow() != 1)
      throw std::runtime_error(std::string(table.tableName()) + ": " +
                               std::to_string(table.nrow()) + " rows where the template holds one");
    return table;
  };
  casacore::MSField field(open(casacore::MS::FIELD));
  casacore::MSSpectralWindow spectralWindow(open(casacore::MS::SPECTRAL_WINDOW));
  casacore::MSDataDescription dataDescription(open(casacore::MS::DATA_DESCRIPTION));
  casacore::MSObservation observation(open(casacore::MS::OBSERVATION));
  casacore::MSProcessor processor(open(casacore::MS::PROCESSOR));
  fillField(field, d, unixToMjdSeconds(d.startTime));
  fillSpectralWindow(spectralWindow, dataDescription, d);
  fillObservation(observation, processor, d, path);
}

}  // namespace rtcp::storage
