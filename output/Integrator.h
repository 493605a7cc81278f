#pragma once
/// \file Integrator.h
/// Adds the correlated blocks that come back from the compute ranks into integrations of
/// OLAP.IONProc.integrationSteps blocks per subband (visibilities and valid-sample counts
/// both add), and hands each finished integration on. Blocks may come in any order from
/// any rank; an integration still missing blocks when a later one (maxOpenIntegrations
/// on) starts, or at flush(), goes out with what arrived.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "VisibilitySink.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/Integrations.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {

class Integrator : public VisibilitySink {
 public:
  using Emit = std::function<void(std::unique_ptr<CorrelatedData>)>;

  /// subbandNumbers: per subband index; nrBlocks: blocks in the observation (< 0: unbounded).
  Integrator(int blocksPerIntegration, std::vector<int> subbandNumbers, int64_t nrBlocks, Emit emit,
             int maxOpenIntegrations = 3);
  explicit Integrator(const ObservationSettings& settings, Emit emit, int maxOpenIntegrations = 3);

  /// Throws std::invalid_argument for a subband, block or shape out of range (the
  /// arguments come over the link from another process).
  void add(int subbandIndex, int64_t block, int nrStations, int nrChannels,
           std::span<const std::complex<float>> visibilities,
           std::span<const uint32_t> validSamples) override;
  /// Bounds of a block's shape, far beyond any observation (the RSP station field holds
  /// IDs below 2048; channels are at most a few thousand).
  static constexpr int kMaxStations = 1 << 16;
  static constexpr int kMaxChannels = 1 << 20;
  /// Sends every open integration on, complete or not.
  void flush();
  /// Takes back an integration that was sent on, to fill again: its memory is faulted in
  /// already (fresh memory costs a page fault per 4 KB). Kept within kMaxSpares.
  void recycle(std::unique_ptr<CorrelatedData> spent);
  static constexpr size_t kMaxSpares = 64;

  struct Statistics {
    uint64_t blocks = 0;                  ///< blocks added
    uint64_t duplicates = 0;              ///< blocks that arrived twice (ignored)
    uint64_t late = 0;                    ///< blocks of integrations already sent (ignored)
    uint64_t integrations = 0;            ///< integrations sent on
    uint64_t incompleteIntegrations = 0;  ///< of which had blocks missing
  };
  Statistics statistics() const;

 private:
  struct Open {
    std::unique_ptr<CorrelatedData> data;
    std::vector<bool> added;  ///< [block within the integration]
    int nrAdded = 0;
  };
  using Key = std::pair<int, int64_t>;  ///< subband index, integration

  /// Takes the integrations to send on (called with mutex_ held).
  void closeOlder(int subbandIndex, int64_t integration,
                  std::vector<std::unique_ptr<CorrelatedData>>& out);
  void close(std::map<Key, Open>::iterator it, std::vector<std::unique_ptr<CorrelatedData>>& out);
  /// An integration of this shape to fill (called with mutex_ held): a spare, or new.
  std::unique_ptr<CorrelatedData> takeSpare(int nrStations, int nrChannels);

  Integrations integrations_;
  std::vector<int> subbandNumbers_;
  int64_t nrBlocks_;
  Emit emit_;
  int maxOpen_;
  mutable std::mutex mutex_;
  std::map<Key, Open> open_;
  std::set<Key> closed_;
  std::vector<std::unique_ptr<CorrelatedData>> spares_;  ///< recycled, contents stale
  Statistics statistics_;
};

}  // namespace rtcp::ion
