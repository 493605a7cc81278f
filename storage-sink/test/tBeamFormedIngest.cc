// BeamFormedIngest: beam-formed blocks (RTBF) of a connection reach their files; a block
// whose checksum, observation, TAB, subband or shape is wrong is refused, naming the field,
// and the blocks after it still arrive; a header whose length cannot be trusted closes the
// connection.
#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "BeamFormedIngest.h"
#include "StorageTestUtil.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {
namespace {

const std::string kParset = beamFormedParset(77);

BeamFormedData block(int subband, int64_t number) {
  BeamFormedData data(StokesKind::kI, 16, 8192 / 16);
  data.subband = subband, data.block = number;
  for (size_t i = 0; i < data.samples.size(); ++i) data.samples[i] = float(i % 100);
  for (float& f : data.validFraction.span()) f = 1;
  return data;
}

std::vector<uint8_t> bytesOf(const BeamFormedData& data, uint64_t observationId = 77) {
  std::vector<uint8_t> bytes(beamFormedSerialisedSize(data));
  serialiseBeamFormed(data, observationId, bytes);
  return bytes;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& bytes) {
  to.insert(to.end(), bytes.begin(), bytes.end());
}

}  // namespace

class BeamFormedIngestTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedIngestTest);
  CPPUNIT_TEST(testChecks);
  CPPUNIT_TEST(testConnection);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testChecks() {
    TempDir dir;
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(kParset));
    BeamFormedWriter writer(s, {{0, dir.path()}});
    const BeamFormedIngest ingest(s, writer);
    const auto problem = [&](auto edit) {
      BeamFormedHeader h = BeamFormedHeader::read(bytesOf(block(0, 0)).data());
      edit(h);
      const auto reason = ingest.check(h);
      return reason ? *reason : std::string();
    };
    CPPUNIT_ASSERT_EQUAL(std::string(), problem([](auto&) {}));
    CPPUNIT_ASSERT(contains(problem([](auto& h) { h.observationId = 78; }), "observation id 78"));
    CPPUNIT_ASSERT(contains(problem([](auto& h) { h.tab = 1; }), "TAB 1 is not in the parset"));
    CPPUNIT_ASSERT(contains(problem([](auto& h) { h.subband = 2; }), "subband 2"));
    CPPUNIT_ASSERT(contains(problem([](auto& h) {
                              h.nrChannels = 8, h.nrSamples = 1024;
                              h.payloadSize = h.expectedPayloadSize();
                            }),
                            "the parset gives I, 16, 512"));
    CPPUNIT_ASSERT(contains(problem([](auto& h) { h.block = 4; }), "block 4 beyond"));
    CPPUNIT_ASSERT(contains(problem([](auto& h) { h.magic = 1; }), "magic"));
  }

  void testConnection() {
    TempDir dir;
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(kParset));
    std::vector<uint8_t> connection;
    for (int64_t b = 0; b < s.nrBlocks(); ++b)
      for (int sb = 0; sb < 2; ++sb) {
        std::vector<uint8_t> bytes = bytesOf(block(sb, b));
        if (b == 1 && sb == 1) bytes.back() ^= 1;  // its checksum no longer matches
        append(connection, bytes);
      }
    append(connection, bytesOf(block(0, 2), 78));  // another observation's
    std::vector<uint8_t> bad = bytesOf(block(1, 3));
    bad[6] = 48;  // a header size that cannot be trusted: the connection closes here
    append(connection, bad);
    append(connection, bytesOf(block(0, 3)));  // never read

    BeamFormedWriter writer(s, {{0, dir.path()}});
    BeamFormedIngest ingest(s, writer);
    BytesStream stream(connection, 1000);
    ReceiveBuffer input(stream, 4096);
    std::vector<uint8_t> payload;
    int received = 0;
    while (input.fill(kBeamFormedHeaderSize) && ingest.receive(input, payload, "test")) ++received;
    CPPUNIT_ASSERT_EQUAL(
        9, received);  // 8 + the refused other observation's; closed at the bad header
    CPPUNIT_ASSERT_EQUAL(uint64_t(7), ingest.blocks.load());
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), ingest.rejected.load());
    writer.finish();
    const BeamFormedFileReport report = writer.reports().at(0);
    CPPUNIT_ASSERT_EQUAL(int64_t(4), report.blocks);
    // The 16-channel filter bank's delay, 120 samples, moves the rows 7 output samples
    // earlier (rtcp/BeamFormedTiming.h): the file ends 7 rows before the blocks.
    CPPUNIT_ASSERT_EQUAL(int64_t(4 * 512 - 7), report.rows);
    CPPUNIT_ASSERT_EQUAL(int64_t(1), report.subbandBlocksLost);  // the corrupted one
    // The writer thread's time in its 4 writes (what rtcp-bench capacity compares with the
    // observation's rate).
    CPPUNIT_ASSERT(report.writeSeconds > 0 && report.writeSeconds < 60);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedIngestTest);

}  // namespace rtcp::storage::test
