// BlockReceiver: the blocks of a connection are staged exactly as sent, a corrupted one is
// rejected and the ones after it still arrive, whatever the receive buffer's capacity
// (the sink's 256 KiB, a small one as the fuzz harness uses, one that holds only a header).
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "BlockReceiver.h"
#include "StorageTestUtil.h"
#include "rtcp/BeamFormedWire.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {

class BlockReceiverTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BlockReceiverTest);
  CPPUNIT_TEST(testSameBlocksWhateverTheCapacity);
  CPPUNIT_TEST(testBeamFormedBlocksOnTheSameConnection);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSameBlocksWhateverTheCapacity() {
    TestObservation observation;
    observation.location = "localhost:/nonexistent";
    const ObservationSettings settings =
        ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
    const BlockValidator validator(settings, {{0, 0}, {1, 1}});
    // Subbands 0 and 1 of integrations 0..5; the block of (1, 3) has a corrupted payload.
    std::vector<uint8_t> connection;
    std::map<std::pair<int, int64_t>, std::vector<uint8_t>> sent;  // [(output, integration)]
    for (int64_t i = 0; i < validator.nrIntegrations(); ++i)
      for (int s = 0; s < 2; ++s) {
        std::vector<uint8_t> bytes =
            makeBlock(int(observation.stations.size()), observation.channels, s, i)
                .serialise(uint64_t(settings.observationId));
        if (s == 1 && i == 3)
          bytes.back() ^= 1;  // the CRC no longer matches
        else
          sent[{s, i}].assign(bytes.begin() + kCorrelatedHeaderSize, bytes.end());
        connection.insert(connection.end(), bytes.begin(), bytes.end());
      }
    for (size_t capacity : {ReceiveBuffer::kDefaultCapacity, size_t(4096), size_t(1)})
      for (size_t maxPiece : {size_t(7), size_t(1000), connection.size()}) {
        StagingOptions options;
        options.capacityBytes = sent.size() * 2 * validator.payloadSize();
        options.flushIntervalSeconds = 1e6;
        StagingArea staging(2, validator.payloadSize(), options);
        IngestStatistics statistics;
        BlockReceiver receiver(validator, staging, statistics, capacity);
        BytesStream stream(connection, maxPiece);
        receiver.run(stream, "test");
        staging.close();
        std::map<std::pair<int, int64_t>, std::vector<uint8_t>> staged;
        for (int output = 0; output < 2; ++output)
          for (auto batch = staging.nextBatch(output); !batch.empty();
               batch = staging.nextBatch(output))
            for (auto& block : batch) {
              const uint8_t* payload = block->payload.data();
              staged[{block->output, int64_t(block->header.integration)}].assign(
                  payload, payload + block->header.payloadSize);
              staging.release(std::move(block));
            }
        CPPUNIT_ASSERT(staged == sent);
        CPPUNIT_ASSERT_EQUAL(uint64_t(1), statistics.totalRejected());
        CPPUNIT_ASSERT_EQUAL(uint64_t(sent.size() + 1), statistics.blocksReceived.load());
      }
  }

  /// Correlated and beam-formed blocks interleaved on one connection: each reaches its
  /// own writer.
  void testBeamFormedBlocksOnTheSameConnection() {
    TestObservation observation;
    observation.location = "localhost:/nonexistent";
    TempDir dir;
    const ObservationSettings settings = ObservationSettings::fromParset(
        Parset::fromString(makeParset(observation) +
                           "Observation.Beam[0].nrTiedArrayBeams = 1\n"
                           "Observation.Beam[0].TiedArrayBeam[0].coherent = F\n"
                           "Observation.DataProducts.Output_IncoherentStokes.enabled = T\n"
                           "Observation.DataProducts.Output_IncoherentStokes.locations = "
                           "[localhost:" +
                           dir.path() + "]\n"));
    const BlockValidator validator(settings, {{0, 0}, {1, 1}});
    const int samples = int(settings.samplesPerBlock());
    std::vector<uint8_t> connection;
    for (int64_t i = 0; i < validator.nrIntegrations(); ++i)
      for (int s = 0; s < 2; ++s) {
        const std::vector<uint8_t> correlated =
            makeBlock(int(observation.stations.size()), observation.channels, s, i)
                .serialise(uint64_t(settings.observationId));
        connection.insert(connection.end(), correlated.begin(), correlated.end());
        BeamFormedData beamFormed(StokesKind::kI, 1, samples);
        beamFormed.subband = s, beamFormed.block = i;
        for (float& f : beamFormed.validFraction.span()) f = 1;  // a file holds what is valid
        std::vector<uint8_t> bytes(beamFormedSerialisedSize(beamFormed));
        serialiseBeamFormed(beamFormed, uint64_t(settings.observationId), bytes);
        connection.insert(connection.end(), bytes.begin(), bytes.end());
      }
    StagingOptions options;
    options.capacityBytes = 2 * size_t(validator.nrIntegrations()) * 2 * validator.payloadSize();
    options.flushIntervalSeconds = 1e6;
    StagingArea staging(2, validator.payloadSize(), options);
    IngestStatistics statistics;
    BeamFormedWriter writer(settings, {{0, dir.path()}});
    BeamFormedIngest ingest(settings, writer);
    BlockReceiver receiver(validator, staging, statistics, 4096);
    receiver.receiveBeamFormedWith(&ingest);
    BytesStream stream(connection, 1000);
    receiver.run(stream, "test");
    staging.close();
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), statistics.totalRejected());
    CPPUNIT_ASSERT_EQUAL(uint64_t(2 * validator.nrIntegrations()),
                         statistics.blocksReceived.load());
    CPPUNIT_ASSERT_EQUAL(uint64_t(2 * validator.nrIntegrations()), ingest.blocks.load());
    writer.finish();
    CPPUNIT_ASSERT_EQUAL(int64_t(0), writer.reports().at(0).subbandBlocksLost);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BlockReceiverTest);

}  // namespace rtcp::storage::test
