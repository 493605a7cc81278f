#include "DiskSpace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "MeasurementSetCreator.h"
#include "rtcp/Baselines.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {
namespace {

/// How long a statvfs answer is trusted while nothing was flushed.
constexpr double kRecheckSeconds = 0.2;

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string directoryOf(const std::string& msPath) {
  const std::filesystem::path parent = std::filesystem::path(msPath).parent_path();
  return parent.empty() ? "." : parent.string();
}

/// Makes a file of `bytes` allocated bytes; throws naming it when the disk has no room.
void makeReserve(const std::string& path, uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot create the disk-space reserve " + path + ": " +
                             std::strerror(errno));
  const int error = ::posix_fallocate(fd, 0, off_t(bytes));
  ::close(fd);
  if (error != 0) {
    ::unlink(path.c_str());
    throw std::runtime_error(
        "cannot reserve " + std::to_string(bytes) + " bytes in " + path +
        " (needed to close the MeasurementSets should the disk fill up): " + std::strerror(error));
  }
}

}  // namespace

uint64_t msIntegrationBytes(int nrStations, int nrChannels) {
  const uint64_t cells = uint64_t(nrChannels) * 4;
  // DATA 8, WEIGHT_SPECTRUM 4 and FLAG 1 bit per cell; UVW 24, WEIGHT and SIGMA 16 each;
  // TIME, TIME_CENTROID, INTERVAL, EXPOSURE 8 each; ANTENNA1/2 4 each, FLAG_ROW 1, and
  // the incremental constants: 128 per row is more than all of them.
  return uint64_t(nrBaselines(nrStations)) * (cells * 12 + (cells + 7) / 8 + 128);
}

uint64_t msTileBytes(int nrStations, int nrChannels) {
  const uint64_t rows = uint64_t(mainTableTiling(nrChannels, nrBaselines(nrStations)).rowsPerTile);
  const uint64_t cells = uint64_t(nrChannels) * 4;
  // MeasurementSetCreator's tiles hold the same rows in every column: DATA 8,
  // WEIGHT_SPECTRUM 4 and FLAG 1 bit per cell; UVW 24, WEIGHT and SIGMA 16 per row.
  return rows * (cells * 12 + (cells + 7) / 8 + 24 + 16 + 16);
}

bool isDiskFullError(const std::string& what) {
  return what.find(std::strerror(ENOSPC)) != std::string::npos ||
         what.find(std::strerror(EDQUOT)) != std::string::npos;
}

DiskSpace::DiskSpace(const std::vector<std::string>& msPaths, int64_t observationId,
                     uint64_t integrationBytes, uint64_t tileBytes, uint64_t reserveBytes)
    : integrationBytes_(integrationBytes), tileBytes_(tileBytes), unflushed_(msPaths.size(), 0) {
  std::map<dev_t, int> byDevice;
  for (const std::string& ms : msPaths) {
    const std::string directory = directoryOf(ms);
    std::filesystem::create_directories(directory);
    struct stat st {};
    if (::stat(directory.c_str(), &st) != 0)
      throw std::runtime_error("cannot stat " + directory + ": " + std::strerror(errno));
    auto [it, added] = byDevice.try_emplace(st.st_dev, int(fileSystems_.size()));
    if (added) {
      FileSystem fs;
      fs.directory = directory;
      if (reserveBytes > 0) {
        fs.reservePath = directory + "/.L" + std::to_string(observationId) + ".storage-reserve";
        makeReserve(fs.reservePath, reserveBytes);
      }
      fileSystems_.push_back(fs);
    }
    fileSystemOf_.push_back(it->second);
  }
}

DiskSpace::~DiskSpace() { releaseReserves(); }

void DiskSpace::refresh(FileSystem& fs, double now) {
  struct statvfs s {};
  if (::statvfs(fs.directory.c_str(), &s) != 0) {
    RTCP_LOG_WARN("storage", "statvfs " << fs.directory << ": " << std::strerror(errno));
    return;  // keeps the last answer
  }
  fs.freeBytes = uint64_t(s.f_bavail) * s.f_frsize;
  fs.lastCheck = now;
}

bool DiskSpace::admit(int output) {
  std::lock_guard lock(mutex_);
  const int index = fileSystemOf_[size_t(output)];
  FileSystem& fs = fileSystems_[size_t(index)];
  if (fs.full) return false;
  const uint64_t adds = integrationBytes_ + (unflushed_[size_t(output)] == 0 ? tileBytes_ : 0);
  const uint64_t need = fs.pendingBytes + adds;
  const double now = steadySeconds();
  if (now - fs.lastCheck > kRecheckSeconds) refresh(fs, now);
  if (fs.freeBytes < need && fs.lastCheck != now) refresh(fs, now);  // a fresh answer decides
  if (fs.freeBytes < need) {
    fs.full = true;
    fs.fullReason =
        "the file system of " + fs.directory + " is full: " + std::to_string(fs.freeBytes) +
        " bytes free, " + std::to_string(need) + " needed to write on" +
        (fs.reservePath.empty() ? std::string() : " (besides the reserve " + fs.reservePath + ")");
    return false;
  }
  ++unflushed_[size_t(output)];
  fs.pendingBytes += adds;
  return true;
}

void DiskSpace::flushed(int output) {
  std::lock_guard lock(mutex_);
  FileSystem& fs = fileSystems_[size_t(fileSystemOf_[size_t(output)])];
  uint64_t& unflushed = unflushed_[size_t(output)];
  if (unflushed > 0) fs.pendingBytes -= unflushed * integrationBytes_ + tileBytes_;
  unflushed = 0;
  fs.lastCheck = -1e30;  // statvfs again
}

bool DiskSpace::checkFull(int output, const std::string& error) {
  std::lock_guard lock(mutex_);
  FileSystem& fs = fileSystems_[size_t(fileSystemOf_[size_t(output)])];
  if (fs.full) return true;
  refresh(fs, steadySeconds());
  if (!isDiskFullError(error) && fs.freeBytes >= integrationBytes_ + tileBytes_) return false;
  fs.full = true;
  fs.fullReason = "the file system of " + fs.directory + " is full (" +
                  std::to_string(fs.freeBytes) + " bytes free)";
  return true;
}

void DiskSpace::releaseReserves() {
  std::lock_guard lock(mutex_);
  for (FileSystem& fs : fileSystems_)
    if (!fs.reservePath.empty()) {
      ::unlink(fs.reservePath.c_str());
      fs.reservePath.clear();
    }
}

std::string DiskSpace::fullReason() const {
  std::lock_guard lock(mutex_);
  for (const FileSystem& fs : fileSystems_)
    if (fs.full) return fs.fullReason;
  return {};
}

bool DiskSpace::anyFull() const {
  std::lock_guard lock(mutex_);
  for (const FileSystem& fs : fileSystems_)
    if (fs.full) return true;
  return false;
}

}  // namespace rtcp::storage
