#include "SharedBlockSegment.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "rtcp/RspPacket.h"

namespace rtcp::ion {

SharedBlockSegment::SharedBlockSegment(int nrSlots, size_t slotBytes) {
  if (nrSlots < 1 || slotBytes == 0)
    throw std::invalid_argument("SharedBlockSegment: no slots or empty slots");
  memory_ = SharedMemory::create("rtcp-blocks",
                                 SharedMemory::roundUpToPages(slotBytes) * size_t(nrSlots));
  info_.memory = memory_.name();
  info_.slotBytes = SharedMemory::roundUpToPages(slotBytes);
  info_.firstSlotOffset = SharedMemory::kHeaderBytes;
  info_.nrSlots = nrSlots;
  base_ = memory_.payload() - SharedMemory::kHeaderBytes;
  holderOf_.assign(size_t(nrSlots), -1);
  for (int s = nrSlots - 1; s >= 0; --s) free_.push_back(s);
}

SharedBlockSegment::~SharedBlockSegment() = default;

SharedBlockLocation SharedBlockSegment::lease(uint64_t holder, double timeoutSeconds) {
  std::unique_lock lock(mutex_);
  for (size_t s = 0; s < holderOf_.size(); ++s)
    if (holderOf_[s] == int64_t(holder)) freeSlot(s);
  if (!freed_.wait_for(lock, std::chrono::duration<double>(timeoutSeconds),
                       [&] { return !free_.empty(); }))
    throw std::runtime_error("no free slot in " + std::string(info_.memory.name) + " (" +
                             std::to_string(info_.nrSlots) +
                             " slots, all lent to compute ranks that do not release them)");
  const int slot = free_.back();
  free_.pop_back();
  holderOf_[size_t(slot)] = int64_t(holder);
  return {slot, 0, info_.firstSlotOffset + info_.slotBytes * size_t(slot)};
}

void SharedBlockSegment::freeSlot(size_t slot) {
  if (onRelease_) onRelease_(int(slot));
  holderOf_[slot] = -1;
  free_.push_back(int(slot));
}

void SharedBlockSegment::release(uint64_t mask, uint64_t value) {
  {
    std::lock_guard lock(mutex_);
    for (size_t s = 0; s < holderOf_.size(); ++s)
      if (holderOf_[s] >= 0 && (uint64_t(holderOf_[s]) & mask) == value) freeSlot(s);
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

StationBlock SharedBlockSegment::rowTable(int slot, int nrSubbands, int nrSamples,
                                          int bitsPerSample) {
  if (slot < 0 || slot >= info_.nrSlots ||
      StationBlock::bytesOfRowTable(nrSubbands, nrSamples) > info_.slotBytes)
    throw std::invalid_argument("SharedBlockSegment: row table does not fit slot " +
                                std::to_string(slot));
  return StationBlock::overRowTable(base_ + info_.firstSlotOffset + info_.slotBytes * size_t(slot),
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

SharedBlockMapping::SharedBlockMapping(const SharedSegmentInfo& info)
    : info_(info), memory_(SharedMemory::openReadOnly(info.memory)) {
  info_.memory.name[sizeof info_.memory.name - 1] = 0;
  base_ = memory_.payload() - SharedMemory::kHeaderBytes;
}

SharedBlockMapping::~SharedBlockMapping() = default;

std::span<const uint8_t> SharedBlockMapping::slotBytes(const SharedBlockLocation& location) const {
  if (location.slot < 0 || location.slot >= info_.nrSlots ||
      location.offset != info_.firstSlotOffset + info_.slotBytes * size_t(location.slot))
    throw std::runtime_error("ionproc lent slot " + std::to_string(location.slot) + " at offset " +
                             std::to_string(location.offset) + ", which " + info_.memory.name +
                             " does not have");
  return {base_ + location.offset, info_.slotBytes};
}

StationBlock SharedBlockMapping::block(const SharedBlockLocation& location,
                                       const StationBlockHeader& header,
                                       const SharedMemory* ring) const {
  const size_t bytes = header.rowsInRing
                           ? StationBlock::bytesOfRowTable(header.nrSubbands, header.nrSamples)
                           : StationBlock::bytesInOnePiece(header.nrSubbands, header.nrSamples,
                                                           header.bitsPerSample);
  if (bytes > slotBytes(location).size())
    throw std::runtime_error("ionproc lent slot " + std::to_string(location.slot) + " of " +
                             info_.memory.name + " for a block of " + std::to_string(bytes) +
                             " bytes, more than a slot holds");
  // Read-only pages: a write through these buffers faults instead of corrupting ionproc's.
  uint8_t* slot = const_cast<uint8_t*>(base_ + location.offset);
  if (!header.rowsInRing) {
    StationBlock block =
        StationBlock::over(slot, header.nrSubbands, header.nrSamples, header.bitsPerSample);
    block.header = header;
    return block;
  }
  if (!ring)
    throw std::runtime_error(
        "ionproc lent a block in its sample ring, which this rank has not "
        "mapped");
  StationBlock block =
      StationBlock::overRowTable(slot, header.nrSubbands, header.nrSamples, header.bitsPerSample);
  block.header = header;
  block.rowBase = ring->payload();
  const uint64_t rowBytes =
      uint64_t(header.nrSamples) * uint64_t(bytesPerDualPolSample(header.bitsPerSample));
  for (int j = 0; j < header.nrSubbands; ++j)
    if (block.rowOffsets[size_t(j)] > ring->payloadBytes() ||
        rowBytes > ring->payloadBytes() - block.rowOffsets[size_t(j)])
      throw std::runtime_error("ionproc lent row " + std::to_string(j) + " at offset " +
                               std::to_string(block.rowOffsets[size_t(j)]) + " of " +
                               ring->name().name + ", past its end");
  return block;
}

}  // namespace rtcp::ion
