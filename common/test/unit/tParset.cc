// Tests of the parset reader: every syntax form, the typed getters, and that every
// error names the file, the line and the key.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "SettingsTestUtil.h"
#include "rtcp/Parset.h"

namespace {

using rtcp::Parset;
using rtcp::ParsetError;

using rtcp::test::settings::TempDir;

/// "k<i>" (built by appending: GCC 12 warns falsely on "k" + std::to_string(i)).
std::string keyName(int i) {
  std::string key = "k";
  return key.append(std::to_string(i));
}

using rtcp::test::settings::contains;

/// The message of the ParsetError that `action` throws (fails the test if none).
template <typename Action>
std::string errorOf(Action action) {
  try {
    action();
  } catch (const ParsetError& e) {
    return e.what();
  }
  CPPUNIT_FAIL("expected a ParsetError");
  return {};
}

}  // namespace

class ParsetTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ParsetTest);
  CPPUNIT_TEST(testScalarsAndComments);
  CPPUNIT_TEST(testBooleans);
  CPPUNIT_TEST(testNumbers);
  CPPUNIT_TEST(testVectors);
  CPPUNIT_TEST(testRangesAndRepeats);
  CPPUNIT_TEST(testNestedVectors);
  CPPUNIT_TEST(testTime);
  CPPUNIT_TEST(testFallbacks);
  CPPUNIT_TEST(testErrorNamesFileLineAndKey);
  CPPUNIT_TEST(testMissingEquals);
  CPPUNIT_TEST(testSyntaxErrors);
  CPPUNIT_TEST(testBadRanges);
  CPPUNIT_TEST(testExpansionBounded);
  CPPUNIT_TEST(testBadVectorElements);
  CPPUNIT_TEST(testMissingRequiredKey);
  CPPUNIT_TEST(testDuplicateKeyLaterWins);
  CPPUNIT_TEST(testUnusedKeys);
  CPPUNIT_TEST(testToStringRoundTrip);
  CPPUNIT_TEST(testConcurrentReadMarking);
  CPPUNIT_TEST(testCopyKeepsReadState);
  CPPUNIT_TEST(testMissingFile);
  CPPUNIT_TEST(testMultiLineValues);
  CPPUNIT_TEST(testEverySyntaxErrorReported);
  CPPUNIT_TEST(testSasPrefixAndOnlineControl);
  CPPUNIT_TEST(testAskedKeys);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testScalarsAndComments() {
    const Parset p = Parset::fromString(
        "# a comment line\n"
        "\n"
        "  a.b =   plain text   # trailing comment\n"
        "single = 'quoted # not a comment'\n"
        "double = \"it's\"  # comment\n"
        "empty =\n"
        "withEquals = x=y\n");
    CPPUNIT_ASSERT_EQUAL(std::string("plain text"), p.getString("a.b"));
    CPPUNIT_ASSERT_EQUAL(std::string("quoted # not a comment"), p.getString("single"));
    CPPUNIT_ASSERT_EQUAL(std::string("it's"), p.getString("double"));
    CPPUNIT_ASSERT_EQUAL(std::string(""), p.getString("empty"));
    CPPUNIT_ASSERT_EQUAL(std::string("x=y"), p.getString("withEquals"));
    CPPUNIT_ASSERT_EQUAL(3, p.lineOf("a.b"));
    CPPUNIT_ASSERT(p.isDefined("empty"));
    CPPUNIT_ASSERT(!p.isDefined("comment"));
  }

  void testBooleans() {
    const Parset p =
        Parset::fromString("a = T\nb = F\nc = true\nd = FALSE\ne = 1\nf = 0\ng = yes\n");
    CPPUNIT_ASSERT(p.getBool("a"));
    CPPUNIT_ASSERT(!p.getBool("b"));
    CPPUNIT_ASSERT(p.getBool("c"));
    CPPUNIT_ASSERT(!p.getBool("d"));
    CPPUNIT_ASSERT(p.getBool("e"));
    CPPUNIT_ASSERT(!p.getBool("f"));
    const std::string message = errorOf([&] { p.getBool("g"); });
    CPPUNIT_ASSERT_EQUAL(std::string("<string>:7: key 'g': bad boolean 'yes' (expected T, F, true, "
                                     "false, 1 or 0)"),
                         message);
  }

  void testNumbers() {
    const Parset p = Parset::fromString(
        "i = 42\nn = -7\np = +3\nbig = 350659687500000\nd = 1.5e3\ne = -0.25\nf = 'abc'\ng = "
        "1.2.3\n"
        "h = 1.5\n");
    CPPUNIT_ASSERT_EQUAL(int64_t(42), p.getInt("i"));
    CPPUNIT_ASSERT_EQUAL(int64_t(-7), p.getInt("n"));
    CPPUNIT_ASSERT_EQUAL(int64_t(3), p.getInt("p"));
    CPPUNIT_ASSERT_EQUAL(int64_t(350659687500000), p.getInt("big"));
    CPPUNIT_ASSERT_EQUAL(1500.0, p.getDouble("d"));
    CPPUNIT_ASSERT_EQUAL(-0.25, p.getDouble("e"));
    CPPUNIT_ASSERT_EQUAL(42.0, p.getDouble("i"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getInt("f"); }), "key 'f': bad integer 'abc'"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getInt("h"); }), "bad integer '1.5'"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getDouble("g"); }), ":8: key 'g': bad number '1.2.3'"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getDouble("f"); }), "bad number 'abc'"));
  }

  void testVectors() {
    const Parset p = Parset::fromString(
        "s = [a, b , c]\n"
        "q = ['a, b', \"c]d\", e]\n"
        "e = []\n"
        "blank = [  ]\n"
        "d = [1.5, -2, 3e2]\n"
        "scalar = CS001\n"
        "paths = [file:../rec/CS001.rsp, udp:127.0.0.1:10010]\n");
    CPPUNIT_ASSERT((p.getStringVector("s") == std::vector<std::string>{"a", "b", "c"}));
    CPPUNIT_ASSERT((p.getStringVector("q") == std::vector<std::string>{"a, b", "c]d", "e"}));
    CPPUNIT_ASSERT(p.getStringVector("e").empty());
    CPPUNIT_ASSERT(p.getIntVector("blank").empty());
    CPPUNIT_ASSERT((p.getDoubleVector("d") == std::vector<double>{1.5, -2.0, 300.0}));
    CPPUNIT_ASSERT((p.getStringVector("scalar") == std::vector<std::string>{"CS001"}));
    CPPUNIT_ASSERT((p.getStringVector("paths") ==
                    std::vector<std::string>{"file:../rec/CS001.rsp", "udp:127.0.0.1:10010"}));
  }

  void testRangesAndRepeats() {
    const Parset p = Parset::fromString(
        "r = [100..103]\n"
        "z = [4*0]\n"
        "mix = [1..3, 2*7, 9]\n"
        "one = [5..5]\n"
        "neg = [-2..1]\n"
        "names = [CS001..CS003, RS106]\n"
        "padded = [008..011]\n"
        "rep = [2*'x y']\n");
    CPPUNIT_ASSERT((p.getIntVector("r") == std::vector<int64_t>{100, 101, 102, 103}));
    CPPUNIT_ASSERT((p.getIntVector("z") == std::vector<int64_t>{0, 0, 0, 0}));
    CPPUNIT_ASSERT((p.getIntVector("mix") == std::vector<int64_t>{1, 2, 3, 7, 7, 9}));
    CPPUNIT_ASSERT((p.getIntVector("one") == std::vector<int64_t>{5}));
    CPPUNIT_ASSERT((p.getIntVector("neg") == std::vector<int64_t>{-2, -1, 0, 1}));
    CPPUNIT_ASSERT((p.getStringVector("names") ==
                    std::vector<std::string>{"CS001", "CS002", "CS003", "RS106"}));
    CPPUNIT_ASSERT(
        (p.getStringVector("padded") == std::vector<std::string>{"008", "009", "010", "011"}));
    CPPUNIT_ASSERT((p.getStringVector("rep") == std::vector<std::string>{"x y", "x y"}));
    CPPUNIT_ASSERT(
        (rtcp::expandVector("[2*1..2]") == std::vector<std::string>{"1", "2", "1", "2"}));
  }

  void testNestedVectors() {
    const Parset p = Parset::fromString("n = [[1,2],[3, 4..6], []]\nflat = [a, b]\n");
    const auto nested = p.getNestedStringVector("n");
    CPPUNIT_ASSERT_EQUAL(size_t(3), nested.size());
    CPPUNIT_ASSERT((nested[0] == std::vector<std::string>{"1", "2"}));
    CPPUNIT_ASSERT((nested[1] == std::vector<std::string>{"3", "4", "5", "6"}));
    CPPUNIT_ASSERT(nested[2].empty());
    const auto flat = p.getNestedStringVector("flat");
    CPPUNIT_ASSERT_EQUAL(size_t(2), flat.size());
    CPPUNIT_ASSERT((flat[1] == std::vector<std::string>{"b"}));
  }

  void testTime() {
    const Parset p = Parset::fromString(
        "t = '2026-11-22 20:00:00'\niso = 2026-11-22T20:00:01.5\nbad = '2026-13-45 xx'\n");
    CPPUNIT_ASSERT_EQUAL(1795377600.0, p.getTime("t"));  // independently: calendar.timegm
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1795377601.5, p.getTime("iso"), 1e-6);
    const std::string message = errorOf([&] { p.getTime("bad"); });
    CPPUNIT_ASSERT(contains(message, "<string>:3: key 'bad': "));
    CPPUNIT_ASSERT(contains(message, "2026-13-45 xx"));
  }

  void testFallbacks() {
    const Parset p = Parset::fromString("x = 3\n");
    CPPUNIT_ASSERT_EQUAL(int64_t(5), p.getInt("absent", 5));
    CPPUNIT_ASSERT_EQUAL(int64_t(3), p.getInt("x", 5));
    CPPUNIT_ASSERT_EQUAL(2.5, p.getDouble("absent", 2.5));
    CPPUNIT_ASSERT(p.getBool("absent", true));
    CPPUNIT_ASSERT_EQUAL(std::string("d"), p.getString("absent", "d"));
    CPPUNIT_ASSERT((p.getIntVector("absent", {1, 2}) == std::vector<int64_t>{1, 2}));
    CPPUNIT_ASSERT(p.unusedKeys().empty());
  }

  void testErrorNamesFileLineAndKey() {
    TempDir dir;
    std::string text;
    for (int line = 1; line < 12; ++line) text += "# line " + std::to_string(line) + "\n";
    text += "Observation.sampleClock = abc\n";
    const std::string path = dir.write("demo.parset", text);
    const Parset p = Parset::fromFile(path);
    try {
      p.getInt("Observation.sampleClock");
      CPPUNIT_FAIL("bad integer accepted");
    } catch (const ParsetError& e) {
      CPPUNIT_ASSERT_EQUAL(path + ":12: key 'Observation.sampleClock': bad integer 'abc'",
                           std::string(e.what()));
      CPPUNIT_ASSERT_EQUAL(path, e.file());
      CPPUNIT_ASSERT_EQUAL(12, e.line());
      CPPUNIT_ASSERT_EQUAL(std::string("Observation.sampleClock"), e.key());
    }
    CPPUNIT_ASSERT_EQUAL(path + ":12", p.where("Observation.sampleClock"));
  }

  void testMissingEquals() {
    TempDir dir;
    const std::string path =
        dir.write("demo.parset", "a = 1\n\n# c\nb = 2\nc = 3\nd = 4\nfoo bar\n");
    try {
      Parset::fromFile(path);
      CPPUNIT_FAIL("line without '=' accepted");
    } catch (const ParsetError& e) {
      CPPUNIT_ASSERT_EQUAL(path + ":7: missing '=' in line 'foo bar'", std::string(e.what()));
      CPPUNIT_ASSERT_EQUAL(7, e.line());
    }
  }

  void testSyntaxErrors() {
    CPPUNIT_ASSERT(contains(errorOf([] { Parset::fromString("a = 1\nb = 'open\n", "x.parset"); }),
                            "x.parset:2: unterminated quote"));
    CPPUNIT_ASSERT(contains(errorOf([] { Parset::fromString(" = 3\n", "x.parset"); }),
                            "x.parset:1: bad key ''"));
    CPPUNIT_ASSERT(contains(errorOf([] { Parset::fromString("a b = 3\n", "x.parset"); }),
                            "x.parset:1: bad key 'a b'"));
  }

  void testBadRanges() {
    const Parset p = Parset::fromString(
        "a = 1\ndown = [7..3]\nx = [1..x]\nmixed = [CS001..RS003]\n", "r.parset");
    const std::string down = errorOf([&] { p.getIntVector("down"); });
    CPPUNIT_ASSERT(contains(down, "r.parset:2: key 'down': "));
    CPPUNIT_ASSERT(contains(down, "bad range '7..3'"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getIntVector("x"); }), "r.parset:3: key 'x': "));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getStringVector("x"); }), "bad range '1..x'"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getStringVector("mixed"); }), "different prefixes"));
  }

  /// A vector's expansion is bounded in total before anything is copied: nested repeats
  /// exhausted memory ([1000000*1000000*300] is 3e14 elements), and a range of extreme
  /// ends overflowed int64_t.
  void testExpansionBounded() {
    const Parset p = Parset::fromString(
        "issue = [1000000*1000000*300]\nnested = [1000*1000*300]\nmany = [60000*1, 60000*2]\n"
        "wide = [-9000000000000000000..9000000000000000000]\nranges = [1..60000, 1..60000]\n"
        "limit = [100*1000*7]\n",
        "x.parset");
    CPPUNIT_ASSERT(
        contains(errorOf([&] { p.getIntVector("issue"); }), "x.parset:1: key 'issue': "));
    const std::string nested = errorOf([&] { p.getIntVector("nested"); });
    CPPUNIT_ASSERT_MESSAGE(nested, contains(nested, "x.parset:2: key 'nested': "));
    CPPUNIT_ASSERT_MESSAGE(nested, contains(nested,
                                            "repeat '1000*1000*300' expands to more "
                                            "than 100000 elements"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getIntVector("many"); }), "more than 100000"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getIntVector("wide"); }), "more than 100000"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getIntVector("ranges"); }), "more than 100000"));
    CPPUNIT_ASSERT_EQUAL(size_t(100000), p.getIntVector("limit").size());
  }

  void testBadVectorElements() {
    const Parset p = Parset::fromString(
        "i = [1, two, 3]\nd = [1.0, x]\nhole = [1,,2]\nopen = [1, 2\nextra = [1]]\n", "v.parset");
    CPPUNIT_ASSERT(
        contains(errorOf([&] { p.getIntVector("i"); }), "v.parset:1: key 'i': bad integer 'two'"));
    CPPUNIT_ASSERT(
        contains(errorOf([&] { p.getDoubleVector("d"); }), "v.parset:2: key 'd': bad number 'x'"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getStringVector("hole"); }), "empty element"));
    CPPUNIT_ASSERT(contains(errorOf([&] { p.getStringVector("open"); }), "missing ']'"));
    CPPUNIT_ASSERT(
        contains(errorOf([&] { p.getStringVector("extra"); }), "v.parset:5: key 'extra'"));
  }

  void testMissingRequiredKey() {
    const Parset p = Parset::fromString("a = 1\n", "demo.parset");
    try {
      p.getInt("Observation.ObsID");
      CPPUNIT_FAIL("missing key not reported");
    } catch (const ParsetError& e) {
      CPPUNIT_ASSERT_EQUAL(std::string("demo.parset: required key 'Observation.ObsID' is missing"),
                           std::string(e.what()));
      CPPUNIT_ASSERT_EQUAL(std::string("Observation.ObsID"), e.key());
    }
  }

  void testDuplicateKeyLaterWins() {
    const Parset p = Parset::fromString("a = 1\nb = 2\na = 3\n");
    CPPUNIT_ASSERT_EQUAL(int64_t(3), p.getInt("a"));
    CPPUNIT_ASSERT_EQUAL(3, p.lineOf("a"));
  }

  void testUnusedKeys() {
    const Parset p = Parset::fromString("z.first = 1\na.read = 2\nm.typo = 3\nb.read = [1]\n");
    p.getInt("a.read");
    p.getIntVector("b.read");
    CPPUNIT_ASSERT((p.unusedKeys() == std::vector<std::string>{"z.first", "m.typo"}));
    // A failed conversion still counts as read: the key is known, its value is bad.
    p.getInt("z.first");
    CPPUNIT_ASSERT_THROW(p.getBool("m.typo"), ParsetError);
    CPPUNIT_ASSERT(p.unusedKeys().empty());
    CPPUNIT_ASSERT((p.keysWithPrefix("a.") == std::vector<std::string>{"a.read"}));
  }

  void testToStringRoundTrip() {
    Parset p = Parset::fromString("a = [1..3, 2*7]\nb = 'x # y'\nc = 2.5\n");
    p.set("d", "T");
    const Parset q = Parset::fromString(p.toString());
    CPPUNIT_ASSERT((q.getIntVector("a") == std::vector<int64_t>{1, 2, 3, 7, 7}));
    CPPUNIT_ASSERT_EQUAL(std::string("x # y"), q.getString("b"));
    CPPUNIT_ASSERT_EQUAL(2.5, q.getDouble("c"));
    CPPUNIT_ASSERT(q.getBool("d"));
    CPPUNIT_ASSERT_EQUAL(0, p.lineOf("d"));
    CPPUNIT_ASSERT_EQUAL(std::string("<parset>"), Parset().name());
  }

  void testConcurrentReadMarking() {
    std::string text;
    const int keysPerThread = 200, nrThreads = 4;
    for (int i = 0; i < keysPerThread * nrThreads; ++i)
      text += keyName(i) + " = " + std::to_string(i) + "\n";
    text += "never = 1\n";
    const Parset p = Parset::fromString(text);
    std::vector<std::thread> threads;
    for (int t = 0; t < nrThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = t; i < keysPerThread * nrThreads; i += nrThreads)
          if (p.getInt(keyName(i)) != i) std::abort();
      });
    for (std::thread& thread : threads) thread.join();
    CPPUNIT_ASSERT((p.unusedKeys() == std::vector<std::string>{"never"}));
  }

  void testCopyKeepsReadState() {
    Parset p = Parset::fromString("a = 1\nb = 2\n");
    p.getInt("a");
    const Parset copy = p;
    Parset moved = std::move(p);
    CPPUNIT_ASSERT((copy.unusedKeys() == std::vector<std::string>{"b"}));
    CPPUNIT_ASSERT((moved.unusedKeys() == std::vector<std::string>{"b"}));
  }

  void testMultiLineValues() {
    // As COBALT's own HardwareUsed.parset writes Cobalt.Nodes, and a backslash continuation.
    const Parset p = Parset::fromString(
        "Cobalt.Nodes = [\n"
        "  cbt001_0,   # first node\n"
        "\n"
        "  cbt001_1,\n"
        "  'cbt 002'\n"
        "]\n"
        "nested = [[1, 2],\n [3, 4]]\n"
        "long = first part \\\n"
        "   second part\n"
        "after = 7\n",
        "m.parset");
    CPPUNIT_ASSERT((p.getStringVector("Cobalt.Nodes") ==
                    std::vector<std::string>{"cbt001_0", "cbt001_1", "cbt 002"}));
    CPPUNIT_ASSERT_EQUAL(1, p.lineOf("Cobalt.Nodes"));  // where the value starts
    CPPUNIT_ASSERT_EQUAL(size_t(2), p.getNestedStringVector("nested").size());
    CPPUNIT_ASSERT_EQUAL(std::string("first part second part"), p.getString("long"));
    CPPUNIT_ASSERT_EQUAL(int64_t(7), p.getInt("after"));
    CPPUNIT_ASSERT_EQUAL(11, p.lineOf("after"));
    // A new key ends an open value: the open one is reported when read, the next one is kept.
    const Parset open = Parset::fromString("a = [1, 2\nb = 3\n", "o.parset");
    CPPUNIT_ASSERT(contains(errorOf([&] { open.getIntVector("a"); }), "o.parset:1: key 'a'"));
    CPPUNIT_ASSERT_EQUAL(int64_t(3), open.getInt("b"));
  }

  void testEverySyntaxErrorReported() {
    const std::string text =
        "a = 1\n"
        "this line has no equals\n"
        "b = 'open\n"
        "c = 3\n"
        "d e = 4\n"
        "f = 5\n";
    const std::string message = errorOf([&] { Parset::fromString(text, "s.parset"); });
    CPPUNIT_ASSERT(contains(message, "s.parset:2: missing '=' in line 'this line has no equals'"));
    CPPUNIT_ASSERT(contains(message, "s.parset:3: unterminated quote"));
    CPPUNIT_ASSERT(contains(message, "s.parset:5: bad key 'd e'"));
    try {
      Parset::fromString(text, "s.parset");
    } catch (const rtcp::ParsetErrors& e) {
      CPPUNIT_ASSERT_EQUAL(size_t(3), e.errors().size());
      CPPUNIT_ASSERT_EQUAL(2, e.line());  // the first
    }
    // Kept instead of thrown: the good lines are all there.
    const Parset kept = Parset::fromString(text, "s.parset", rtcp::SyntaxErrors::kKeep);
    CPPUNIT_ASSERT_EQUAL(size_t(3), kept.syntaxErrors().size());
    CPPUNIT_ASSERT_EQUAL(5, kept.syntaxErrors()[2].line());
    CPPUNIT_ASSERT_EQUAL(int64_t(1), kept.getInt("a"));
    CPPUNIT_ASSERT_EQUAL(int64_t(3), kept.getInt("c"));
    CPPUNIT_ASSERT_EQUAL(int64_t(5), kept.getInt("f"));
  }

  void testSasPrefixAndOnlineControl() {
    // A SAS task specification: every key under ObsSW., COBALT's keys only under
    // OnlineControl; no blanks around '=', empty values, unquoted blanks.
    const Parset p = Parset::fromString(
        "ObsSW.Observation.otdbID=78958\n"
        "ObsSW.Observation.Beam[0].target=BF Target\n"
        "ObsSW.Observation.Beam[0].startTime=\n"
        "ObsSW.Observation.ObservationControl.OnlineControl.Cobalt.Correlator.nrChannelsPerSubband="
        "16\n"
        "ObsSW.Observation.ObservationControl.OnlineControl.OLAP.realTime=true\n"
        "ObsSW.Observation.ObservationControl.OnlineControl.Cobalt.realTime=false\n"
        "Cobalt.realTime=true\n"
        "Version.number=28583\n",
        "spec.txt");
    CPPUNIT_ASSERT_EQUAL(int64_t(78958), p.getInt("Observation.otdbID"));
    CPPUNIT_ASSERT_EQUAL(1, p.lineOf("Observation.otdbID"));
    CPPUNIT_ASSERT(!p.isDefined("ObsSW.Observation.otdbID"));
    CPPUNIT_ASSERT_EQUAL(std::string("BF Target"), p.getString("Observation.Beam[0].target"));
    CPPUNIT_ASSERT_EQUAL(std::string(""), p.getString("Observation.Beam[0].startTime"));
    CPPUNIT_ASSERT_EQUAL(int64_t(16), p.getInt("Cobalt.Correlator.nrChannelsPerSubband"));
    CPPUNIT_ASSERT_EQUAL(4, p.lineOf("Cobalt.Correlator.nrChannelsPerSubband"));
    CPPUNIT_ASSERT(p.getBool("OLAP.realTime"));
    CPPUNIT_ASSERT(p.getBool("Cobalt.realTime"));  // given at top level: that one
    CPPUNIT_ASSERT_EQUAL(int64_t(28583), p.getInt("Version.number"));
  }

  void testAskedKeys() {
    const Parset p = Parset::fromString("a = 1\nb = 2\n");
    p.getInt("a");
    p.getInt("absent", 3);
    p.isDefined("other");
    CPPUNIT_ASSERT((p.askedKeys() == std::vector<std::string>{"a", "absent", "other"}));
    CPPUNIT_ASSERT((p.unusedKeys() == std::vector<std::string>{"b"}));
  }

  void testMissingFile() {
    const std::string message = errorOf([] { Parset::fromFile("/nonexistent/dir/x.parset"); });
    CPPUNIT_ASSERT(contains(message, "/nonexistent/dir/x.parset"));
    CPPUNIT_ASSERT(contains(message, "cannot open"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ParsetTest);
