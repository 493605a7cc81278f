#include "MeasurementSetTemplate.h"

#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/Tables/TableLock.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "CasacoreLock.h"
#include "FileSystemSync.h"
#include "MeasurementSetCreator.h"
#include "ParallelFor.h"
#include "rtcp/Files.h"

namespace rtcp::storage {
namespace {

namespace fs = std::filesystem;

/// Threads that copy MSs: mostly waiting for the file system to create inodes.
constexpr int kCreatingThreads = 4;

/// An MS's directory tree held in memory, without casacore's lock files (each table gets
/// its own when opened): read once from the template, written for every copy with three
/// system calls a file (open, write, close) where a file-by-file copy takes nine
/// (open, stat, open, stat, chmod, sendfile, close, close and the directory walk's stat).
class TreeImage {
 public:
  explicit TreeImage(const fs::path& root) { read(root, ""); }

  void write(const fs::path& to) const {
    fs::create_directory(to);
    for (const Entry& entry : entries_) {
      const fs::path target = to / entry.relative;
      if (entry.directory) {
        fs::create_directory(target);
        continue;
      }
      const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) throw std::runtime_error(target.string() + ": " + std::strerror(errno));
      for (size_t done = 0; done < entry.bytes.size();) {
        const ssize_t n = ::write(fd, entry.bytes.data() + done, entry.bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const int error = errno;
          ::close(fd);
          throw std::runtime_error(target.string() + ": " + std::strerror(error));
        }
        done += size_t(n);
      }
      if (::close(fd) != 0) throw std::runtime_error(target.string() + ": " + std::strerror(errno));
    }
  }

 private:
  struct Entry {
    fs::path relative;
    bool directory = false;
    std::string bytes;
  };

  void read(const fs::path& root, const fs::path& relative) {
    for (const fs::directory_entry& entry : fs::directory_iterator(root / relative)) {
      const fs::path name = relative / entry.path().filename();
      if (entry.is_directory()) {
        entries_.push_back({name, true, {}});
        read(root, name);
      } else if (entry.path().filename() != "table.lock") {
        entries_.push_back({name, false, readFile(entry.path().string())});
      }
    }
  }

  std::vector<Entry> entries_;  // a directory before what it holds
};

/// Runs make(), which makes the MS at path; when it fails, removes what it made (no half-made
/// MS for a restart to trip over) and throws an error naming the MS.
void makeOrRemove(const std::string& path, const std::function<void()>& make) {
  try {
    make();
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove_all(path, ignored);
    throw std::runtime_error(path + ": cannot create the MeasurementSet: " + e.what());
  }
}

/// Makes path a copy of an MS with the subband's own tables rewritten.
void copyMeasurementSet(const TreeImage& from, const std::string& path,
                        const MeasurementSetDescription& d) {
  from.write(path);
  std::lock_guard lock(casacoreMutex());
  rewriteSubbandTables(path, d);
}

}  // namespace

MeasurementSetDescription templateKey(MeasurementSetDescription d) {
  d.beam = 0;
  d.ra = d.dec = 0;
  d.tileBeam.angle1 = d.tileBeam.angle2 = 0;  // its type is in FIELD's column description
  d.targets.clear();
  d.subbandIndex = d.subbandNumber = 0;
  d.subbandFrequency = 0;
  d.channelFrequencies.assign(d.channelFrequencies.size(), 0.0);
  return d;
}

int createMeasurementSets(const std::vector<MeasurementSetDescription>& descriptions,
                          const std::vector<std::string>& paths,
                          const std::function<void(int)>& created,
                          const std::function<void(size_t)>& madeOne) {
  if (descriptions.size() != paths.size())
    throw std::invalid_argument("createMeasurementSets: one description per path");
  std::vector<std::string> directories;
  std::vector<size_t> toMake;  // [index into paths]
  for (size_t i = 0; i < paths.size(); ++i) {
    if (fs::exists(paths[i])) continue;
    const fs::path parent = fs::absolute(paths[i]).parent_path();
    fs::create_directories(parent);
    if (std::find(directories.begin(), directories.end(), parent) == directories.end())
      directories.push_back(parent.string());
    toMake.push_back(i);
  }
  // The first MS of each kind from scratch, one after another; the rest copies of it.
  std::vector<std::pair<MeasurementSetDescription, std::string>> templates;  // [key, path]
  std::vector<size_t> templateIndex;              // [index into templates]: index into paths
  std::vector<std::pair<size_t, size_t>> copies;  // [index into paths, index into templates]
  std::mutex progressMutex;
  int count = 0;
  const auto made = [&](size_t i) {
    if (madeOne) madeOne(i);
    std::lock_guard lock(progressMutex);
    ++count;
    if (created) created(count);
  };
  for (size_t i : toMake) {
    MeasurementSetDescription key = templateKey(descriptions[i]);
    const auto known = std::find_if(templates.begin(), templates.end(),
                                    [&](const auto& t) { return t.first == key; });
    if (known != templates.end()) {
      copies.emplace_back(i, size_t(known - templates.begin()));
      continue;
    }
    makeOrRemove(paths[i], [&] {
      std::lock_guard lock(casacoreMutex());
      createMeasurementSet(paths[i], descriptions[i], false);  // closed (written) on return
    });
    templates.emplace_back(std::move(key), paths[i]);
    templateIndex.push_back(i);
  }
  // Copies on several threads: writing files waits for the file system and needs no lock.
  std::vector<TreeImage> images;  // [index into templates]
  for (const auto& t : templates) images.emplace_back(t.second);
  for (size_t i : templateIndex) made(i);  // only now: a writer may write into it at once
  forEachInParallel(copies.size(), kCreatingThreads, [&](size_t c) {
    const size_t i = copies[c].first, t = copies[c].second;  // clang 14: no captured bindings
    makeOrRemove(paths[i], [&] { copyMeasurementSet(images[t], paths[i], descriptions[i]); });
    made(i);
  });
  syncFileSystems(directories);
  return count;
}

}  // namespace rtcp::storage
