#include "SharedBlockSegment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>

namespace rtcp::ion {

namespace {

constexpr size_t kPage = size_t(2) << 20;  ///< slots start on 2 MB boundaries

size_t roundUp(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

std::runtime_error systemError(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

SharedBlockSegment::SharedBlockSegment(int nrSlots, size_t slotBytes) {
  if (nrSlots < 1 || slotBytes == 0)
    throw std::invalid_argument("SharedBlockSegment: no slots or empty slots");
  static std::atomic<int> counter{0};
  const std::string name =
      "/rtcp-blocks-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::snprintf(info_.name, sizeof info_.name, "%s", name.c_str());
  info_.slotBytes = roundUp(slotBytes);
  info_.firstSlotOffset = kPage;
  info_.nrSlots = nrSlots;
  info_.bytes = info_.firstSlotOffset + info_.slotBytes * size_t(nrSlots);
  info_.nonce = std::random_device{}() * 0x100000001ull ^ uint64_t(getpid());

  const int fd = ::shm_open(info_.name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) throw systemError(std::string("shm_open ") + info_.name);
  if (::ftruncate(fd, off_t(info_.bytes)) != 0) {
    ::close(fd);
    ::shm_unlink(info_.name);
    throw systemError(std::string("ftruncate ") + info_.name);
  }
  void* p = ::mmap(nullptr, info_.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    ::shm_unlink(info_.name);
    throw systemError(std::string("mmap ") + info_.name);
  }
  base_ = static_cast<uint8_t*>(p);
  // Shared memory comes in 4 KB pages here (no huge pages for shmem): fault them all in
  // with one call now, not one fault per page while serving (a hint: ignored if refused).
  ::madvise(base_, info_.bytes, MADV_POPULATE_WRITE);
  std::memcpy(base_, &info_.nonce, sizeof info_.nonce);
  holderOf_.assign(size_t(nrSlots), -1);
  for (int s = nrSlots - 1; s >= 0; --s) free_.push_back(s);
}

SharedBlockSegment::~SharedBlockSegment() {
  ::munmap(base_, info_.bytes);
  ::shm_unlink(info_.name);
}

SharedBlockLocation SharedBlockSegment::lease(uint64_t holder, double timeoutSeconds) {
  std::unique_lock lock(mutex_);
  for (size_t s = 0; s < holderOf_.size(); ++s)
    if (holderOf_[s] == int64_t(holder)) {
      holderOf_[s] = -1;
      free_.push_back(int(s));
    }
  if (!freed_.wait_for(lock, std::chrono::duration<double>(timeoutSeconds),
                       [&] { return !free_.empty(); }))
    throw std::runtime_error("no free slot in " + std::string(info_.name) + " (" +
                             std::to_string(info_.nrSlots) +
                             " slots, all lent to compute ranks that do not release them)");
  const int slot = free_.back();
  free_.pop_back();
  holderOf_[size_t(slot)] = int64_t(holder);
  return {slot, 0, info_.firstSlotOffset + info_.slotBytes * size_t(slot)};
}

void SharedBlockSegment::release(uint64_t mask, uint64_t value) {
  {
    std::lock_guard lock(mutex_);
    for (size_t s = 0; s < holderOf_.size(); ++s)
      if (holderOf_[s] >= 0 && (uint64_t(holderOf_[s]) & mask) == value) {
        holderOf_[s] = -1;
        free_.push_back(int(s));
      }
  }
  freed_.notify_all();
}

StationBlock SharedBlockSegment::block(int slot, int nrSubbands, int nrSamples, int bitsPerSample) {
  if (slot < 0 || slot >= info_.nrSlots ||
      StationBlock::bytesInOnePiece(nrSubbands, nrSamples, bitsPerSample) > info_.slotBytes)
    throw std::invalid_argument("SharedBlockSegment: block does not fit slot " +
                                std::to_string(slot));
  return StationBlock::over(base_ + info_.firstSlotOffset + info_.slotBytes * size_t(slot),
                            nrSubbands, nrSamples, bitsPerSample);
}

std::span<uint8_t> SharedBlockSegment::slotBytes(int slot) {
  if (slot < 0 || slot >= info_.nrSlots)
    throw std::invalid_argument("SharedBlockSegment: no slot " + std::to_string(slot));
  return {base_ + info_.firstSlotOffset + info_.slotBytes * size_t(slot), info_.slotBytes};
}

int SharedBlockSegment::leased() const {
  std::lock_guard lock(mutex_);
  return info_.nrSlots - int(free_.size());
}

SharedBlockMapping::SharedBlockMapping(const SharedSegmentInfo& info) : info_(info) {
  info_.name[sizeof info_.name - 1] = 0;
  const int fd = ::shm_open(info_.name, O_RDONLY, 0);
  if (fd < 0) throw systemError(std::string("shm_open ") + info_.name);
  void* p = ::mmap(nullptr, info_.bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw systemError(std::string("mmap ") + info_.name);
  base_ = static_cast<uint8_t*>(p);
  ::madvise(base_, info_.bytes, MADV_POPULATE_READ);  // one call, not a fault per page
  uint64_t nonce = 0;
  std::memcpy(&nonce, base_, sizeof nonce);
  if (nonce != info_.nonce) {
    ::munmap(base_, info_.bytes);
    throw std::runtime_error(std::string(info_.name) +
                             " is not the segment ionproc announced (another host's?)");
  }
}

SharedBlockMapping::~SharedBlockMapping() { ::munmap(base_, info_.bytes); }

std::span<const uint8_t> SharedBlockMapping::slotBytes(const SharedBlockLocation& location) const {
  if (location.slot < 0 || location.slot >= info_.nrSlots ||
      location.offset != info_.firstSlotOffset + info_.slotBytes * size_t(location.slot))
    throw std::runtime_error("ionproc lent slot " + std::to_string(location.slot) + " at offset " +
                             std::to_string(location.offset) + ", which " + info_.name +
                             " does not have");
  return {base_ + location.offset, info_.slotBytes};
}

StationBlock SharedBlockMapping::block(const SharedBlockLocation& location,
                                       const StationBlockHeader& header) const {
  const size_t bytes =
      StationBlock::bytesInOnePiece(header.nrSubbands, header.nrSamples, header.bitsPerSample);
  if (bytes > slotBytes(location).size())
    throw std::runtime_error("ionproc lent slot " + std::to_string(location.slot) + " of " +
                             info_.name + " for a block of " + std::to_string(bytes) +
                             " bytes, more than a slot holds");
  // Read-only pages: a write through these buffers faults instead of corrupting ionproc's.
  StationBlock block =
      StationBlock::over(const_cast<uint8_t*>(base_ + location.offset), header.nrSubbands,
                         header.nrSamples, header.bitsPerSample);
  block.header = header;
  return block;
}

}  // namespace rtcp::ion
