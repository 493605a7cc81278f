#include "BeamFormedFileWriter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <numbers>
#include <numeric>
#include <stdexcept>

#include "rtcp/BeamFormedTiming.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"

#ifndef RTCP_VERSION
#define RTCP_VERSION "unknown"
#endif

namespace rtcp::storage {
namespace {

using namespace hdf5;

constexpr double kDegrees = 180.0 / std::numbers::pi;

std::string numbered(const char* prefix, int n, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%s%0*d", prefix, digits, n);
  return text;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

std::vector<std::string> stationNames(const ObservationSettings& s) {
  std::vector<std::string> names;
  for (const StationSettings& st : s.stations) names.push_back(st.name);
  return names;
}

/// The half channel COBALT's second filter bank shifts a subband's channels down by
/// (getFrequencyOffsetPPF): 0 for one channel.
double ppfOffset(double subbandWidth, int channels) {
  return channels > 1 ? 0.5 * subbandWidth / channels : 0.0;
}

/// Sky frequency (Hz) of channel c of subband `subband` with C channels, as the file
/// annotates it: the subband's centre for one channel, else f − fs/2 + c·fs/C.
double channelFrequency(const ObservationSettings& s, int subband, int channels, int c) {
  const double centre = s.subbands.at(size_t(subband)).frequency;
  if (channels == 1) return centre;
  return centre - s.subbandWidth() / 2 + c * s.subbandWidth() / channels;
}

/// The time of the observation's first sample (the parset's start time, or up to a sample
/// after it).
double firstSampleTime(const ObservationSettings& s) {
  return SampleClock(s.clockMHz).unixTime(s.startSample());
}

/// The end of the observation as the blocks make it (COBALT's getRealStopTime).
double realStopTime(const ObservationSettings& s) {
  return firstSampleTime(s) + double(s.nrBlocks()) * s.blockDuration();
}

/// Opens (creating it when it is not there, never truncating it) a .raw file.
int openRaw(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  return fd;
}

void writeAll(int fd, const void* data, size_t size, off_t offset, const std::string& path) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, bytes, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    bytes += n, size -= size_t(n), offset += n;
  }
}

/// fsync of a file or directory by its path ("": the working directory).
void syncPath(const std::string& path) {
  const std::string name = path.empty() ? "." : path;
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("cannot open " + name + " to sync it: " + std::strerror(errno));
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (result != 0) throw std::runtime_error("cannot sync " + name + ": " + std::strerror(error));
}

}  // namespace

std::string formatIsoUtc(double unixTime) {
  const double whole = std::floor(unixTime);
  const std::time_t seconds = static_cast<std::time_t>(whole);
  const long nanoseconds = std::lround((unixTime - whole) * 1e9);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char date[32], text[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text, sizeof text, "%.19s.%09dZ", date,
                int(std::clamp(nanoseconds, 0L, 999'999'999L)));
  return text;
}

double toMjd(double unixTime) { return 40587.0 + unixTime / 86400.0; }

BeamFormedFileWriter::BeamFormedFileWriter(const ObservationSettings& s, int fileIndex,
                                           const std::string& directory, const std::string& runId)
    : file_(s.beamFormed.files.at(size_t(fileIndex))),
      tab_(s.beamFormed.saps.at(size_t(file_.sap)).tabs.at(size_t(file_.tab))),
      stokes_(s.beamFormed.stokes(tab_)),
      layout_(s, fileIndex, directory),
      startTime_(firstSampleTime(s)),
      samplingTime_(double(stokes_.inputSamplesPerSample()) / s.subbandWidth()) {
  const bool existed = std::filesystem::exists(layout_.h5Path);
  try {
    raw_ = openRaw(layout_.rawPath);
    weightRaw_ = openRaw(layout_.weightPath);
    const std::lock_guard lock(hdf5Mutex());
    if (!existed || !reopen(runId)) {
      if (::ftruncate(raw_, 0) != 0 || ::ftruncate(weightRaw_, 0) != 0)
        throw std::runtime_error("cannot empty " + layout_.rawPath + ": " + std::strerror(errno));
      h5_ = Handle(H5Fcreate(layout_.h5Path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                   H5Fclose, "create " + layout_.h5Path);
      if (!runId.empty()) setString(h5_, "RTCP_RUN_ID", runId);
      create(s);
    }
    check(H5Fflush(h5_, H5F_SCOPE_LOCAL), "flush " + layout_.h5Path);
  } catch (...) {
    if (raw_ >= 0) ::close(raw_);
    if (weightRaw_ >= 0) ::close(weightRaw_);
    raw_ = weightRaw_ = -1;
    const std::lock_guard lock(hdf5Mutex());
    weights_.reset(), samples_.reset(), beam_.reset(), sap_.reset(), h5_.reset();
    throw;
  }
}

BeamFormedFileWriter::~BeamFormedFileWriter() {
  try {
    finish();
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", layout_.h5Path << ": " << e.what());
  }
  if (raw_ >= 0) ::close(raw_);
  if (weightRaw_ >= 0) ::close(weightRaw_);
  const std::lock_guard lock(hdf5Mutex());  // what a failed finish() left open
  weights_.reset(), samples_.reset(), beam_.reset(), sap_.reset(), h5_.reset();
}

void BeamFormedFileWriter::create(const ObservationSettings& s) {
  writeRootAttributes(s);
  sap_ = createGroup(h5_, numbered("SUB_ARRAY_POINTING_", file_.sap, 3));
  writeSapAttributes(s, sap_);
  beam_ = createGroup(sap_, numbered("BEAM_", file_.tab, 3));
  writeBeamAttributes(s, beam_);
  writeCoordinates(s, beam_);
  createDataSets(beam_);
}

bool BeamFormedFileWriter::reopen(const std::string& runId) {
  struct stat raw {
  }, weight{};
  if (::fstat(raw_, &raw) != 0 || ::fstat(weightRaw_, &weight) != 0)
    throw std::runtime_error("cannot read " + layout_.rawPath + ": " + std::strerror(errno));
  const hid_t file = H5Fopen(layout_.h5Path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0 && weight.st_size == 0) {
    // Killed while it made the .h5 (before its first flush), with nothing written: made anew.
    RTCP_LOG_WARN("storage", layout_.h5Path << " does not open and holds no data: made again");
    std::filesystem::remove(layout_.h5Path);
    return false;
  }
  h5_ = Handle(file, H5Fclose, "open " + layout_.h5Path + " to continue it");
  const std::string written = readString(h5_, "RTCP_RUN_ID");
  if (written != runId)
    throw std::runtime_error("cannot continue " + layout_.h5Path + ": it was written by " +
                             (written.empty() ? std::string("no recorded run") : "run " + written) +
                             ", this is " +
                             (runId.empty() ? std::string("no recorded run") : "run " + runId));
  sap_ = openGroup(h5_, numbered("SUB_ARRAY_POINTING_", file_.sap, 3));
  beam_ = openGroup(sap_, numbered("BEAM_", file_.tab, 3));
  samples_ = openDataSet(beam_, numbered("STOKES_", file_.component, 1));
  weights_ = openDataSet(beam_, numbered("WEIGHT_", file_.component, 1));
  // A row's samples are written before its valid fractions: the weights say what is there.
  rowsAtOpen_ = int64_t(uint64_t(std::min(raw.st_size, weight.st_size)) / layout_.rowBytes());
  rows_ = rowsAtOpen_;
  RTCP_LOG_INFO("storage",
                layout_.h5Path << ": reopened, holding " << rowsAtOpen_ << " rows; continued");
  return true;
}

void BeamFormedFileWriter::writeRootAttributes(const ObservationSettings& s) {
  const BeamFormedSettings& bf = s.beamFormed;
  setString(h5_, "GROUPTYPE", "Root");
  setString(h5_, "FILENAME", std::filesystem::path(layout_.h5Path).filename().string());
  setString(h5_, "FILEDATE", formatIsoUtc(double(std::time(nullptr))));
  setString(h5_, "FILETYPE", "bf");
  setString(h5_, "TELESCOPE", "LOFAR");
  setString(h5_, "PROJECT_ID", s.campaign.name);
  setString(h5_, "PROJECT_TITLE", s.campaign.title);
  setString(h5_, "PROJECT_PI", s.campaign.pi);
  setString(h5_, "PROJECT_CO_I", joined(s.campaign.coInvestigators, "; "));
  setString(h5_, "PROJECT_CONTACT", s.campaign.contact);
  setString(h5_, "OBSERVATION_ID", std::to_string(s.observationId));
  setString(h5_, "OBSERVATION_START_UTC", formatIsoUtc(startTime_));
  setDouble(h5_, "OBSERVATION_START_MJD", toMjd(startTime_));
  setString(h5_, "OBSERVATION_END_UTC", formatIsoUtc(realStopTime(s)));
  setDouble(h5_, "OBSERVATION_END_MJD", toMjd(realStopTime(s)));
  setUnsigned(h5_, "OBSERVATION_NOF_STATIONS", unsigned(s.nrStations()));
  setStrings(h5_, "OBSERVATION_STATIONS_LIST", stationNames(s));
  // The band of all outputs, each shifted down half a channel by its second filter bank
  // (as COBALT's CommonLofarAttributes).
  std::vector<double> offsets;
  if (s.correlatedOutput.enabled)
    offsets.push_back(ppfOffset(s.subbandWidth(), s.channelsPerSubband));
  if (bf.coherentEnabled) offsets.push_back(ppfOffset(s.subbandWidth(), bf.coherent.nrChannels));
  if (bf.incoherentEnabled)
    offsets.push_back(ppfOffset(s.subbandWidth(), bf.incoherent.nrChannels));
  const double minOffset = *std::min_element(offsets.begin(), offsets.end());
  const double maxOffset = *std::max_element(offsets.begin(), offsets.end());
  double low = 1e300, high = 0;
  for (const SubbandSettings& sb : s.subbands)
    low = std::min(low, sb.frequency), high = std::max(high, sb.frequency);
  low -= s.subbandWidth() / 2 + maxOffset;
  high += s.subbandWidth() / 2 - minOffset;
  setDouble(h5_, "OBSERVATION_FREQUENCY_MIN", low / 1e6);
  setDouble(h5_, "OBSERVATION_FREQUENCY_CENTER", (low + high) / 2 / 1e6);
  setDouble(h5_, "OBSERVATION_FREQUENCY_MAX", high / 1e6);
  setString(h5_, "OBSERVATION_FREQUENCY_UNIT", "MHz");
  setUnsigned(h5_, "OBSERVATION_NOF_BITS_PER_SAMPLE", unsigned(s.bitsPerSample));
  setDouble(h5_, "CLOCK_FREQUENCY", s.clockMHz);
  setString(h5_, "CLOCK_FREQUENCY_UNIT", "MHz");
  setString(h5_, "ANTENNA_SET", s.antennaSet);
  setString(h5_, "FILTER_SELECTION", s.bandFilter);
  std::vector<std::string> targets;
  for (size_t b = 0; b < s.beams.size(); ++b)
    targets.push_back(b < s.beamTargets.size() ? joined(s.beamTargets[b], ",") : "");
  setStrings(h5_, "TARGETS", targets);
  setString(h5_, "SYSTEM_VERSION", RTCP_VERSION);
  setString(h5_, "PIPELINE_NAME", "");
  setString(h5_, "PIPELINE_VERSION", "");
  setString(h5_, "DOC_NAME", "ICD 3: Beam-Formed Data");
  setString(h5_, "DOC_VERSION", "2.5.0");
  setString(h5_, "NOTES", "");
  // ICD 3's root attributes beyond the common ones.
  setString(h5_, "CREATE_OFFLINE_ONLINE", s.realTime ? "Online" : "Offline");
  setString(h5_, "BF_FORMAT", "TAB");
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  setString(h5_, "BF_VERSION",
            std::string("rtcp ") + RTCP_VERSION + " using HDF5 " + std::to_string(major) + "." +
                std::to_string(minor) + "." + std::to_string(release));
  setDouble(h5_, "TOTAL_INTEGRATION_TIME", double(s.nrBlocks()) * s.blockDuration());
  setString(h5_, "TOTAL_INTEGRATION_TIME_UNIT", "s");
  setString(h5_, "OBSERVATION_DATATYPE", "");
  setDouble(h5_, "SUB_ARRAY_POINTING_DIAMETER", 0);
  setString(h5_, "SUB_ARRAY_POINTING_DIAMETER_UNIT", "arcmin");
  setDouble(h5_, "BANDWIDTH", s.nrSubbands() * s.subbandWidth() / 1e6);
  setString(h5_, "BANDWIDTH_UNIT", "MHz");
  setDouble(h5_, "BEAM_DIAMETER", 0);
  setString(h5_, "BEAM_DIAMETER_UNIT", "arcmin");
  setUnsigned(h5_, "OBSERVATION_NOF_SUB_ARRAY_POINTINGS", unsigned(s.beams.size()));
  setUnsigned(h5_, "NOF_SUB_ARRAY_POINTINGS", 1);
  const Handle sysLog = createGroup(h5_, "SYS_LOG");
  setString(sysLog, "GROUPTYPE", "SysLog");
}

void BeamFormedFileWriter::writeSapAttributes(const ObservationSettings& s, hid_t sap) {
  const Direction& centre = s.beams.at(size_t(file_.sap));
  setString(sap, "GROUPTYPE", "SubArrayPointing");
  setString(sap, "EXPTIME_START_UTC", formatIsoUtc(startTime_));
  setDouble(sap, "EXPTIME_START_MJD", toMjd(startTime_));
  setString(sap, "EXPTIME_END_UTC", formatIsoUtc(realStopTime(s)));
  setDouble(sap, "EXPTIME_END_MJD", toMjd(realStopTime(s)));
  setDouble(sap, "TOTAL_INTEGRATION_TIME", double(s.nrBlocks()) * s.blockDuration());
  setString(sap, "TOTAL_INTEGRATION_TIME_UNIT", "s");
  setDouble(sap, "POINT_RA", centre.ra * kDegrees);
  setString(sap, "POINT_RA_UNIT", "deg");
  setDouble(sap, "POINT_DEC", centre.dec * kDegrees);
  setString(sap, "POINT_DEC_UNIT", "deg");
  setUnsigned(sap, "OBSERVATION_NOF_BEAMS",
              unsigned(s.beamFormed.saps.at(size_t(file_.sap)).tabs.size()));
  setUnsigned(sap, "NOF_BEAMS", 1);
  const Handle history = createGroup(sap, "PROCESS_HISTORY");
  setString(history, "GROUPTYPE", "ProcessingHistory");
  setString(history, "OBSERVATION_PARSET", s.parsetText);
}

void BeamFormedFileWriter::writeBeamAttributes(const ObservationSettings& s, hid_t beam) {
  const Direction& centre = s.beams.at(size_t(file_.sap));
  const BeamFormedSettings& bf = s.beamFormed;
  setString(beam, "GROUPTYPE", "Beam");
  const std::vector<std::string> stations =
      tab_.station >= 0 ? std::vector<std::string>{s.stations.at(size_t(tab_.station)).name}
                        : stationNames(s);
  setStrings(beam, "TARGETS",
             size_t(file_.sap) < s.beamTargets.size()
                 ? std::vector<std::string>{joined(s.beamTargets[size_t(file_.sap)], ",")}
                 : std::vector<std::string>{""});
  setUnsigned(beam, "NOF_STATIONS", unsigned(stations.size()));
  setStrings(beam, "STATIONS_LIST", stations);
  setUnsigned(beam, "NOF_SAMPLES", unsigned(layout_.plannedRows));
  setDouble(beam, "SAMPLING_RATE", 1.0 / samplingTime_);
  setString(beam, "SAMPLING_RATE_UNIT", "Hz");
  setDouble(beam, "SAMPLING_TIME", samplingTime_);
  setString(beam, "SAMPLING_TIME_UNIT", "s");
  setUnsigned(beam, "CHANNELS_PER_SUBBAND", unsigned(stokes_.nrChannels));
  setDouble(beam, "SUBBAND_WIDTH", s.subbandWidth());
  setString(beam, "SUBBAND_WIDTH_UNIT", "Hz");
  setDouble(beam, "CHANNEL_WIDTH", s.subbandWidth() / stokes_.nrChannels);
  setString(beam, "CHANNEL_WIDTH_UNIT", "Hz");
  setString(beam, "TRACKING", centre.type);
  setDouble(beam, "POINT_RA", tab_.direction.ra * kDegrees);
  setString(beam, "POINT_RA_UNIT", "deg");
  setDouble(beam, "POINT_DEC", tab_.direction.dec * kDegrees);
  setString(beam, "POINT_DEC_UNIT", "deg");
  setDouble(beam, "POINT_OFFSET_RA", (tab_.direction.ra - centre.ra) * kDegrees);
  setString(beam, "POINT_OFFSET_RA_UNIT", "deg");
  setDouble(beam, "POINT_OFFSET_DEC", (tab_.direction.dec - centre.dec) * kDegrees);
  setString(beam, "POINT_OFFSET_DEC_UNIT", "deg");
  setDouble(beam, "BEAM_DIAMETER_RA", 0);
  setString(beam, "BEAM_DIAMETER_RA_UNIT", "arcmin");
  setDouble(beam, "BEAM_DIAMETER_DEC", 0);
  setString(beam, "BEAM_DIAMETER_DEC_UNIT", "arcmin");
  double centreSum = 0;
  for (int sb = 0; sb < file_.nrSubbands; ++sb)
    centreSum += s.subbands.at(size_t(file_.firstSubband + sb)).frequency;
  setDouble(beam, "BEAM_FREQUENCY_CENTER",
            (centreSum / file_.nrSubbands - ppfOffset(s.subbandWidth(), stokes_.nrChannels)) / 1e6);
  setString(beam, "BEAM_FREQUENCY_CENTER_UNIT", "MHz");
  setBool(beam, "FOLDED_DATA", false);
  setDouble(beam, "FOLD_PERIOD", 0);
  setString(beam, "FOLD_PERIOD_UNIT", "s");
  const bool dedispersed = bf.dedispersed(tab_);
  setString(beam, "DEDISPERSION", dedispersed ? "COHERENT" : "NONE");
  setDouble(beam, "DISPERSION_MEASURE", dedispersed ? tab_.dispersionMeasure : 0.0);
  setString(beam, "DISPERSION_MEASURE_UNIT", "pc/cm^3");
  setBool(beam, "BARYCENTERED", false);
  setUnsigned(beam, "OBSERVATION_NOF_STOKES", unsigned(stokes_.nrComponents()));
  setUnsigned(beam, "NOF_STOKES", 1);
  setStrings(beam, "STOKES_COMPONENTS",
             {stokesComponents(stokes_.kind).at(size_t(file_.component))});
  setBool(beam, "COMPLEX_VOLTAGE", stokes_.kind == StokesKind::kXXYY);
  setString(beam, "SIGNAL_SUM", tab_.coherent ? "COHERENT" : "INCOHERENT");
  const Handle history = createGroup(beam, "PROCESS_HISTORY");
  setString(history, "GROUPTYPE", "ProcessingHistory");
  setString(history, "OBSERVATION_PARSET", s.parsetText);
}

void BeamFormedFileWriter::writeCoordinates(const ObservationSettings& s, hid_t beam) {
  const Handle coordinates = createGroup(beam, "COORDINATES");
  setString(coordinates, "GROUPTYPE", "Coordinates");
  setDoubles(coordinates, "REF_LOCATION_VALUE",
             {s.referencePhaseCenter[0], s.referencePhaseCenter[1], s.referencePhaseCenter[2]});
  setStrings(coordinates, "REF_LOCATION_UNIT", {"m", "m", "m"});
  setString(coordinates, "REF_LOCATION_FRAME", "ITRF");
  setDouble(coordinates, "REF_TIME_VALUE", toMjd(startTime_));
  setString(coordinates, "REF_TIME_UNIT", "d");
  setString(coordinates, "REF_TIME_FRAME", "MJD");
  setUnsigned(coordinates, "NOF_COORDINATES", 2);
  setUnsigned(coordinates, "NOF_AXES", 2);
  setStrings(coordinates, "COORDINATE_TYPES", {"Time", "Spectral"});

  // Time: linear from the start (COBALT writes the increment in seconds under the unit
  // "us"; here the unit says what the value is); row 0 starts layout_.firstRowOffset seconds
  // after REF_TIME_VALUE (the part of the beam former's delay below one output sample).
  const Handle time = createGroup(coordinates, "COORDINATE_0");
  setString(time, "GROUPTYPE", "TimeCoord");
  setString(time, "COORDINATE_TYPE", "Time");
  setStrings(time, "STORAGE_TYPE", {"Linear"});
  setUnsigned(time, "NOF_AXES", 1);
  setStrings(time, "AXIS_NAMES", {"Time"});
  setStrings(time, "AXIS_UNITS", {"s"});
  setDouble(time, "REFERENCE_VALUE", layout_.firstRowOffset);
  setDouble(time, "REFERENCE_PIXEL", 0);
  setDouble(time, "INCREMENT", samplingTime_);
  setDoubles(time, "PC", {1.0});
  setUnsigneds(time, "AXIS_VALUES_PIXEL", {0});
  setDoubles(time, "AXIS_VALUES_WORLD", {layout_.firstRowOffset});

  // Frequency: tabular, the centre of each column's channel.
  const Handle spectral = createGroup(coordinates, "COORDINATE_1");
  setString(spectral, "GROUPTYPE", "SpectralCoord");
  setString(spectral, "COORDINATE_TYPE", "Spectral");
  setStrings(spectral, "STORAGE_TYPE", {"Tabular"});
  setUnsigned(spectral, "NOF_AXES", 1);
  setStrings(spectral, "AXIS_NAMES", {"Frequency"});
  setStrings(spectral, "AXIS_UNITS", {"Hz"});
  setDouble(spectral, "REFERENCE_VALUE", 0);
  setDouble(spectral, "REFERENCE_PIXEL", 0);
  setDouble(spectral, "INCREMENT", 0);
  setDoubles(spectral, "PC", {1.0});
  std::vector<unsigned> pixels(static_cast<size_t>(layout_.nrColumns));
  std::iota(pixels.begin(), pixels.end(), 0u);
  std::vector<double> world;
  for (int sb = 0; sb < file_.nrSubbands; ++sb)
    for (int c = 0; c < stokes_.nrChannels; ++c)
      world.push_back(channelFrequency(s, file_.firstSubband + sb, stokes_.nrChannels, c));
  setUnsigneds(spectral, "AXIS_VALUES_PIXEL", pixels);
  setDoubles(spectral, "AXIS_VALUES_WORLD", world);
}

void BeamFormedFileWriter::createDataSets(hid_t beam) {
  const hsize_t dims[2] = {hsize_t(layout_.plannedRows), hsize_t(layout_.nrColumns)};
  const hsize_t maxDims[2] = {H5S_UNLIMITED, hsize_t(layout_.nrColumns)};
  const Handle space(H5Screate_simple(2, dims, maxDims), H5Sclose, "create a dataspace");
  const std::string name = numbered("STOKES_", file_.component, 1);

  // The samples: contiguous in the .raw (named relative to the .h5, as COBALT does).
  const Handle external(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create properties");
  const std::string rawName = std::filesystem::path(layout_.rawPath).filename().string();
  check(H5Pset_external(external, rawName.c_str(), 0, H5F_UNLIMITED), "use " + rawName);
  samples_ = Handle(
      H5Dcreate2(beam, name.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, external, H5P_DEFAULT),
      H5Dclose, "create data set " + name);
  setString(samples_, "GROUPTYPE", "bfData");
  setString(samples_, "DATATYPE", "float");
  setString(samples_, "STOKES_COMPONENT",
            stokesComponents(stokes_.kind).at(size_t(file_.component)));
  setUnsigneds(samples_, "NOF_CHANNELS",
               std::vector<unsigned>(size_t(file_.nrSubbands), unsigned(stokes_.nrChannels)));
  setUnsigned(samples_, "NOF_SUBBANDS", unsigned(file_.nrSubbands));
  setUnsigned(samples_, "NOF_SAMPLES", unsigned(layout_.plannedRows));

  // The valid fractions: contiguous in the .weight.raw likewise (a row never written reads
  // as 0: nothing valid).
  const Handle weightExternal(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create properties");
  const std::string weightRawName = std::filesystem::path(layout_.weightPath).filename().string();
  check(H5Pset_external(weightExternal, weightRawName.c_str(), 0, H5F_UNLIMITED),
        "use " + weightRawName);
  const std::string weightName = numbered("WEIGHT_", file_.component, 1);
  weights_ = Handle(H5Dcreate2(beam, weightName.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT,
                               weightExternal, H5P_DEFAULT),
                    H5Dclose, "create data set " + weightName);
  setString(weights_, "GROUPTYPE", "bfWeight");
  setString(weights_, "DATATYPE", "float");
  setString(weights_, "STOKES_DATASET", name);
  setString(weights_, "DESCRIPTION",
            "fraction of valid input samples behind each value of " + name +
                " (0..1; 0 where data were lost: those values are zeros)");
}

void BeamFormedFileWriter::writeBlock(int64_t block, std::span<const float> samples,
                                      std::span<const float> validFraction) {
  const size_t values = size_t(layout_.samplesPerBlock) * size_t(layout_.nrColumns);
  if (samples.size() != values || validFraction.size() != values || block < 0)
    throw std::invalid_argument(layout_.h5Path + ": block " + std::to_string(block) + " of " +
                                std::to_string(samples.size()) + " values, expected " +
                                std::to_string(values));
  // The block's rows less the delay's whole output samples; those before row 0 (the
  // observation's first block, the dedispersion's start-up) are not written.
  const auto [firstRow, end] = layout_.rowsOf(block);
  if (firstRow == end) return;
  const size_t first = size_t(samplesPerBlock() - (end - firstRow)) * size_t(layout_.nrColumns);
  const size_t bytes = size_t(end - firstRow) * layout_.rowBytes();
  const off_t offset = off_t(firstRow) * off_t(layout_.rowBytes());
  static_assert(std::endian::native == std::endian::little, "the .raw holds little-endian float32");
  // Samples first: a valid fraction on disk says its sample is there too.
  writeAll(raw_, samples.data() + first, bytes, offset, layout_.rawPath);
  writeAll(weightRaw_, validFraction.data() + first, bytes, offset, layout_.weightPath);
  rows_ = std::max(rows_, end);
  bytes_ += 2 * bytes;
}

void BeamFormedFileWriter::keepWhatIsOnDisk(int64_t block, std::span<float> samples,
                                            std::span<float> validFraction,
                                            const std::vector<bool>& present) const {
  const auto [firstRow, end] = layout_.rowsOf(block);
  const int64_t onDisk = std::min(end, rowsAtOpen_);
  if (firstRow >= onDisk) return;
  const int channels = layout_.nrChannels, columns = layout_.nrColumns;
  const size_t skipped = size_t(samplesPerBlock() - (end - firstRow));
  std::vector<float> row(static_cast<size_t>(columns)), weights(static_cast<size_t>(columns));
  for (int64_t r = firstRow; r < onDisk; ++r) {
    const off_t offset = off_t(r) * off_t(layout_.rowBytes());
    if (::pread(raw_, row.data(), layout_.rowBytes(), offset) != ssize_t(layout_.rowBytes()) ||
        ::pread(weightRaw_, weights.data(), layout_.rowBytes(), offset) !=
            ssize_t(layout_.rowBytes()))
      throw std::runtime_error("cannot read row " + std::to_string(r) + " of " + layout_.rawPath);
    const size_t at = (skipped + size_t(r - firstRow)) * size_t(columns);
    for (size_t sb = 0; sb < present.size(); ++sb) {
      if (present[sb]) continue;
      const size_t column = sb * size_t(channels);
      std::copy_n(row.data() + column, channels, samples.data() + at + column);
      std::copy_n(weights.data() + column, channels, validFraction.data() + at + column);
    }
  }
}

void BeamFormedFileWriter::sync() {
  if (!h5Synced_) {
    syncPath(layout_.h5Path);
    syncPath(std::filesystem::path(layout_.h5Path).parent_path().string());
    h5Synced_ = true;
  }
  // Samples first, as they were written: a valid fraction on disk says its sample is too.
  if (::fdatasync(raw_) != 0)
    throw std::runtime_error("cannot sync " + layout_.rawPath + ": " + std::strerror(errno));
  if (::fdatasync(weightRaw_) != 0)
    throw std::runtime_error("cannot sync " + layout_.weightPath + ": " + std::strerror(errno));
}

void BeamFormedFileWriter::setLengths(int64_t rows) {
  const hsize_t dims[2] = {hsize_t(rows), hsize_t(layout_.nrColumns)};
  check(H5Dset_extent(samples_, dims), "set the length of " + layout_.h5Path);
  check(H5Dset_extent(weights_, dims), "set the weight length of " + layout_.h5Path);
}

void BeamFormedFileWriter::finish() {
  if (finished_) return;
  finished_ = true;
  // The .raw files hold every row the data sets say they have (holes read as zeros).
  const off_t size = off_t(rows_) * off_t(layout_.rowBytes());
  if (::ftruncate(raw_, size) != 0 || ::fsync(raw_) != 0)
    throw std::runtime_error("cannot finish " + layout_.rawPath + ": " + std::strerror(errno));
  if (::ftruncate(weightRaw_, size) != 0 || ::fsync(weightRaw_) != 0)
    throw std::runtime_error("cannot finish " + layout_.weightPath + ": " + std::strerror(errno));
  const std::lock_guard lock(hdf5Mutex());
  setLengths(rows_);
  const double end = startTime_ + layout_.firstRowOffset + double(rows_) * samplingTime_;
  setUnsigned(beam_, "NOF_SAMPLES", unsigned(rows_));
  setUnsigned(samples_, "NOF_SAMPLES", unsigned(rows_));
  setString(sap_, "EXPTIME_END_UTC", formatIsoUtc(end));
  setDouble(sap_, "EXPTIME_END_MJD", toMjd(end));
  setDouble(sap_, "TOTAL_INTEGRATION_TIME", end - startTime_);
  setDouble(h5_, "TOTAL_INTEGRATION_TIME", end - startTime_);
  weights_.reset();
  samples_.reset();
  beam_.reset();
  sap_.reset();
  check(H5Fflush(h5_, H5F_SCOPE_LOCAL), "flush " + layout_.h5Path);
  h5_.reset();
}

}  // namespace rtcp::storage
