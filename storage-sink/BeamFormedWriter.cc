#include "BeamFormedWriter.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

#include "ParallelFor.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {

BeamFormedWriter::BeamFormedWriter(const ObservationSettings& settings,
                                   const std::vector<Target>& targets, int blocksInFlight,
                                   std::function<void()> written, const std::string& runId,
                                   double syncSeconds)
    : settings_(settings),
      blocksInFlight_(std::max(1, blocksInFlight)),
      toWrite_("beam-formed blocks"),
      written_(std::move(written)),
      syncInterval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::max(0.0, syncSeconds)))),
      writtenThrough_(std::make_unique<std::atomic<int64_t>[]>(targets.size())),
      durable_(std::make_unique<std::atomic<int64_t>[]>(targets.size())) {
  files_.reserve(targets.size());
  for (const Target& target : targets) {
    File file;
    file.description = settings.beamFormed.files.at(size_t(target.file));
    file.writer =
        std::make_unique<BeamFormedFileWriter>(settings, target.file, target.directory, runId);
    file.report.path = file.writer->h5Path();
    file.written.assign(size_t(blocksPerFile()), false);
    const bool continued = file.writer->rowsAtOpen() > 0;
    if (continued) {  // what the file holds is written
      const BeamFormedHoldings held =
          readBeamFormedHoldings(file.writer->layout(), blocksPerFile());
      for (size_t b = 0; b < file.written.size(); ++b) file.written[b] = held.subbandsHeld[b] > 0;
      file.report.blocks = held.blocks;
      file.report.rows = held.rows;
      // What the killed sink wrote may be in the page cache alone: on disk before it counts.
      file.writer->sync();
    }
    const int index = int(files_.size());
    writtenThrough_[size_t(index)] = -1;
    fileOfSettings_[target.file] = index;
    files_.push_back(std::move(file));
    advanceWritten(files_.back(), index);
    durable_[size_t(index)] = writtenThrough_[size_t(index)].load();
  }
  writer_ = std::thread([this] { writeLoop(); });
}

void BeamFormedWriter::advanceWritten(const File& file, int index) {
  int64_t mark = writtenThrough_[size_t(index)];
  while (size_t(mark + 1) < file.written.size() && file.written[size_t(mark + 1)]) ++mark;
  writtenThrough_[size_t(index)] = mark;
}

BeamFormedWriter::~BeamFormedWriter() {
  try {
    finish();
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", "beam-formed files: " << e.what());
  }
}

bool BeamFormedWriter::accept(const BeamFormedData& data) {
  const BeamFormedSettings& bf = settings_.beamFormed;
  if (data.sap < 0 || size_t(data.sap) >= bf.saps.size() || data.tab < 0 ||
      size_t(data.tab) >= bf.saps[size_t(data.sap)].tabs.size())
    throw std::invalid_argument("beam-formed data of SAP " + std::to_string(data.sap) + " TAB " +
                                std::to_string(data.tab) + ": no such TAB");
  const TabSettings& tab = bf.saps[size_t(data.sap)].tabs[size_t(data.tab)];
  const StokesSettings& stokes = bf.stokes(tab);
  const int samples = stokes.outputSamplesPerBlock(settings_.samplesPerBlock());
  if (data.kind != stokes.kind || data.nrChannels != stokes.nrChannels ||
      data.nrSamples != samples || data.block < 0 ||
      data.samples.size() !=
          size_t(data.nrComponents()) * size_t(samples) * size_t(data.nrChannels) ||
      data.validFraction.size() != size_t(samples) * size_t(data.nrChannels))
    throw std::invalid_argument(
        "beam-formed data of SAP " + std::to_string(data.sap) + " TAB " + std::to_string(data.tab) +
        " block " + std::to_string(data.block) + ": " + stokesName(data.kind) + ", " +
        std::to_string(data.nrChannels) + " channels, " + std::to_string(data.nrSamples) +
        " samples; the settings say " + stokesName(stokes.kind) + ", " +
        std::to_string(stokes.nrChannels) + ", " + std::to_string(samples));
  bool here = false;
  for (int component = 0; component < data.nrComponents(); ++component) {
    const int index = bf.fileOf(data.sap, data.tab, component, data.subband);
    const auto local = fileOfSettings_.find(index);
    if (local == fileOfSettings_.end()) continue;
    place(data, component, local->second);
    here = true;
  }
  return here;
}

BeamFormedWriter::Block BeamFormedWriter::takeBlock(int index, int64_t number) {
  File& file = files_[size_t(index)];
  Block block;
  if (!file.spare.empty()) {
    block = std::move(file.spare.back());
    file.spare.pop_back();
    block.samples.zero();
    block.weights.zero();
  } else {
    const size_t values = size_t(file.writer->samplesPerBlock()) * size_t(file.writer->nrColumns());
    block.samples = AlignedBuffer<float>(values);
    block.weights = AlignedBuffer<float>(values);
    ++file.allocated;
  }
  block.file = index;
  block.number = number;
  block.present.assign(size_t(file.description.nrSubbands), false);
  block.nrPresent = 0;
  return block;
}

void BeamFormedWriter::place(const BeamFormedData& data, int component, int index) {
  std::unique_lock lock(mutex_);
  File& file = files_[size_t(index)];
  if (size_t(data.block) < file.queued.size() && file.queued[size_t(data.block)]) {
    // A block that went whole to the writer: this is sent again (a connection broke); else
    // the subband came too late.
    if (!file.queuedWhole[size_t(data.block)]) ++file.report.subbandBlocksLate;
    return;
  }
  auto it = file.pending.find(data.block);
  if (it == file.pending.end()) {
    // Blocks begun longer ago than the window allows are written as they are.
    while (!file.pending.empty() && file.pending.begin()->first <= data.block - blocksInFlight_)
      queue(file, file.pending.begin());
    // Wait for the writer to return a buffer when all are in use.
    // Every buffer in use: wait for the writer to return one, or (when all are being
    // filled: blocks out of order) write the oldest as it is.
    while (file.spare.empty() && file.allocated >= blocksInFlight_ + 2 && !writeError_) {
      if (file.pending.size() >= size_t(file.allocated))
        queue(file, file.pending.begin());
      else
        spareReturned_.wait(lock);
    }
    it = file.pending.emplace(data.block, takeBlock(index, data.block)).first;
  }
  Block& block = it->second;
  const int slot = data.subband - file.description.firstSubband;
  if (block.present[size_t(slot)]) {
    RTCP_LOG_WARN("storage", file.report.path << ": subband " << data.subband << " of block "
                                              << data.block << " came twice; the first kept");
    return;
  }
  // One copy: the subband's [sample][channel] into its columns of the file's rows.
  const int columns = file.writer->nrColumns(), channels = data.nrChannels;
  const float* samples =
      data.samples.data() + size_t(component) * size_t(data.nrSamples) * size_t(channels);
  for (int i = 0; i < data.nrSamples; ++i) {
    const size_t row = size_t(i) * size_t(columns) + size_t(slot) * size_t(channels);
    std::copy_n(samples + size_t(i) * size_t(channels), channels, block.samples.data() + row);
    std::copy_n(data.validFraction.data() + size_t(i) * size_t(channels), channels,
                block.weights.data() + row);
  }
  block.present[size_t(slot)] = true;
  if (++block.nrPresent == file.description.nrSubbands) queue(file, it);
}

void BeamFormedWriter::queue(File& file, std::map<int64_t, Block>::iterator block) {
  file.report.subbandBlocksLost += file.description.nrSubbands - block->second.nrPresent;
  if (file.queued.size() <= size_t(block->first)) file.queued.resize(size_t(block->first) + 1);
  file.queued[size_t(block->first)] = true;
  if (file.queuedWhole.size() <= size_t(block->first))
    file.queuedWhole.resize(size_t(block->first) + 1);
  file.queuedWhole[size_t(block->first)] = block->second.nrPresent == file.description.nrSubbands;
  Block ready = std::move(block->second);
  file.pending.erase(block);
  toWrite_.push(std::move(ready));
}

void BeamFormedWriter::writeLoop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point nextSync = Clock::now() + syncInterval_;
  for (;;) {
    std::optional<Block> block =
        toWrite_.popFor(std::max(Clock::duration::zero(), nextSync - Clock::now()));
    if (block) {
      write(*block);
    } else if (toWrite_.closed()) {
      while (std::optional<Block> rest = toWrite_.pop()) write(*rest);
      break;  // finish() syncs what is left
    }
    if (Clock::now() >= nextSync) {
      syncWritten();
      nextSync = Clock::now() + syncInterval_;
    }
  }
}

void BeamFormedWriter::write(Block& block) {
  File& file = files_[size_t(block.file)];
  const auto start = std::chrono::steady_clock::now();
  try {
    if (!writeError_) {
      if (block.nrPresent < file.description.nrSubbands)
        file.writer->keepWhatIsOnDisk(block.number, block.samples.span(), block.weights.span(),
                                      block.present);
      file.writer->writeBlock(block.number, block.samples.span(), block.weights.span());
      file.unsynced = true;
    }
  } catch (...) {
    const std::lock_guard lock(mutex_);
    if (!writeError_) writeError_ = std::current_exception();
    spareReturned_.notify_all();
  }
  {
    const std::lock_guard lock(mutex_);
    const size_t number = size_t(block.number);
    if (number >= file.written.size() || !file.written[number]) ++file.report.blocks;
    file.report.writeSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    file.report.bytes = file.writer->bytesWritten();
    file.report.rows = file.writer->nrRows();
    if (!writeError_ && number < file.written.size()) {
      file.written[number] = true;
      advanceWritten(file, block.file);
    }
    file.spare.push_back(std::move(block));
    spareReturned_.notify_all();
  }
  if (written_) written_();
}

void BeamFormedWriter::syncWritten() {
  std::vector<size_t> dirty;
  for (size_t f = 0; f < files_.size(); ++f)
    if (files_[f].unsynced && !writeError_) dirty.push_back(f);
  // Only this thread writes: every block written so far is in what these syncs cover.
  std::vector<int64_t> written(dirty.size());
  for (size_t d = 0; d < dirty.size(); ++d) written[d] = writtenThrough_[dirty[d]];
  // Several files at once: ext4 commits concurrent syncs' journal in one go (18 files'
  // fdatasyncs took 20 ms on 8 threads against 90 ms one after the other, 28 Nov 2026).
  const auto start = std::chrono::steady_clock::now();
  try {
    forEachInParallel(dirty.size(), kSyncThreads,
                      [&](size_t d) { files_[dirty[d]].writer->sync(); });
  } catch (...) {
    const std::lock_guard lock(mutex_);
    if (!writeError_) writeError_ = std::current_exception();
    spareReturned_.notify_all();
    return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::lock_guard lock(mutex_);
  for (size_t d = 0; d < dirty.size(); ++d) {
    File& file = files_[dirty[d]];
    file.unsynced = false;
    durable_[dirty[d]] = written[d];
    file.report.writeSeconds += seconds / double(dirty.size());  // the wall time, shared out
    ++file.report.syncs;
  }
}

int64_t BeamFormedWriter::blocksPerFile() const { return nrProcessedBlocks(settings_); }

bool BeamFormedWriter::complete() const {
  for (size_t f = 0; f < files_.size(); ++f)
    if (writtenThrough_[f] < blocksPerFile() - 1) return false;
  return true;
}

int64_t BeamFormedWriter::durableBlock(int sap, int tab, int subband) const {
  const BeamFormedSettings& bf = settings_.beamFormed;
  const TabSettings& t = bf.saps.at(size_t(sap)).tabs.at(size_t(tab));
  int64_t mark = std::numeric_limits<int64_t>::max();
  bool here = false;
  for (int component = 0; component < bf.stokes(t).nrComponents(); ++component) {
    const auto local = fileOfSettings_.find(bf.fileOf(sap, tab, component, subband));
    if (local == fileOfSettings_.end()) continue;
    mark = std::min(mark, durable_[size_t(local->second)].load());
    here = true;
  }
  return here ? mark : -1;
}

void BeamFormedWriter::finish() {
  if (finished_) return;
  finished_ = true;
  {
    const std::lock_guard lock(mutex_);
    for (File& file : files_)
      while (!file.pending.empty()) queue(file, file.pending.begin());
  }
  toWrite_.close();
  if (writer_.joinable()) writer_.join();
  for (size_t f = 0; f < files_.size(); ++f) {
    File& file = files_[f];
    const auto start = std::chrono::steady_clock::now();
    file.writer->finish();  // the .raw files synced to disk, the lengths set
    if (!writeError_) durable_[f] = writtenThrough_[f].load();
    // What the file holds, whatever this sink or one before it wrote: blocks of the
    // observation never written are lost whole.
    const BeamFormedHoldings held = readBeamFormedHoldings(file.writer->layout(), blocksPerFile());
    const std::lock_guard lock(mutex_);
    file.report.writeSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    file.report.rows = held.rows;
    file.report.blocks = held.blocks;
    file.report.subbandBlocksLost = held.subbandBlocksLost;
  }
  if (writeError_) std::rethrow_exception(writeError_);
}

std::vector<BeamFormedFileReport> BeamFormedWriter::reports() const {
  const std::lock_guard lock(mutex_);
  std::vector<BeamFormedFileReport> reports;
  for (const File& file : files_) reports.push_back(file.report);
  return reports;
}

}  // namespace rtcp::storage
