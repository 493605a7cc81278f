// Tests of the connection handshake (rtcp/Handshake.h) and the observation's secret file.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rtcp/Handshake.h"
#include "rtcp/ObservationSecret.h"

using namespace rtcp;

namespace {

/// A connected pair of stream sockets, closed at the end.
struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { CPPUNIT_ASSERT_EQUAL(0, ::socketpair(AF_UNIX, SOCK_STREAM, 0, fd)); }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void closeConnector() { ::close(std::exchange(fd[1], -1)); }
};

/// The listener's and the connector's outcome: "" when accepted, else the error.
struct Outcome {
  std::string listener, connector;
};

Outcome shake(const Handshake& listener, const Handshake& connector, double timeout = 5) {
  SocketPair pair;
  auto listening = std::async(std::launch::async, [&] {
    try {
      listener.acceptPeer(pair.fd[0], timeout);
      return std::string();
    } catch (const HandshakeError& e) {
      ::shutdown(pair.fd[0], SHUT_RDWR);  // as the listener closes a refused connection
      return std::string(e.what());
    }
  });
  std::string connected;
  try {
    connector.proveToPeer(pair.fd[1], timeout);
  } catch (const HandshakeError& e) {
    connected = e.what();
  }
  return {listening.get(), connected};
}

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/rtcp-handshake-XXXXXX";
    CPPUNIT_ASSERT(::mkdtemp(name));
    path = name;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// Moves n bytes from one socket to another (a tap between connector and listener), keeping
/// a copy in `seen` when given; false when they did not all come.
bool pass(int from, int to, size_t n, std::vector<uint8_t>* seen = nullptr) {
  std::vector<uint8_t> bytes(n);
  if (::recv(from, bytes.data(), n, MSG_WAITALL) != ssize_t(n)) return false;
  if (seen) *seen = bytes;
  return ::write(to, bytes.data(), n) == ssize_t(n);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class HandshakeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(HandshakeTest);
  CPPUNIT_TEST(testSameSecretIsAccepted);
  CPPUNIT_TEST(testWrongSecretIsRefused);
  CPPUNIT_TEST(testOtherObservationIsRefused);
  CPPUNIT_TEST(testOtherPurposeIsRefused);
  CPPUNIT_TEST(testBlockWithoutProofIsRefused);
  CPPUNIT_TEST(testListenerWithoutSecretIsNotTrusted);
  CPPUNIT_TEST(testReplayedResponseIsRefused);
  CPPUNIT_TEST(testSilentPeerTimesOut);
  CPPUNIT_TEST(testPeerThatHangsUp);
  CPPUNIT_TEST(testSecretNeverOnTheWire);
  CPPUNIT_TEST(testSecretFileRoundTrip);
  CPPUNIT_TEST(testSecretFileReadableByOthersIsRefused);
  CPPUNIT_TEST(testSecretFileNotOverwritten);
  CPPUNIT_TEST(testSecretLineOnStandardInput);
  CPPUNIT_TEST(testBadSecretLines);
  CPPUNIT_TEST(testSecretsDiffer);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSameSecretIsAccepted() {
    const ObservationSecret secret = ObservationSecret::generate();
    const Handshake a(secret, 1001, ConnectionPurpose::kStorage);
    const Outcome outcome = shake(a, a);
    CPPUNIT_ASSERT_EQUAL(std::string(), outcome.listener);
    CPPUNIT_ASSERT_EQUAL(std::string(), outcome.connector);
  }

  void testWrongSecretIsRefused() {
    const Handshake listener(ObservationSecret::generate(), 1001, ConnectionPurpose::kStorage);
    const Handshake forger(ObservationSecret::generate(), 1001, ConnectionPurpose::kStorage);
    const Outcome outcome = shake(listener, forger);
    CPPUNIT_ASSERT_MESSAGE(outcome.listener, contains(outcome.listener, "wrong proof"));
    CPPUNIT_ASSERT_MESSAGE(outcome.connector, contains(outcome.connector, "refused"));
  }

  void testOtherObservationIsRefused() {
    const ObservationSecret secret = ObservationSecret::generate();
    const Handshake listener(secret, 1001, ConnectionPurpose::kStorage);
    const Handshake other(secret, 1002, ConnectionPurpose::kStorage);
    const Outcome outcome = shake(listener, other);
    CPPUNIT_ASSERT_MESSAGE(outcome.connector,
                           contains(outcome.connector, "serves observation 1001, not 1002"));
    CPPUNIT_ASSERT(!outcome.listener.empty());  // the connector hung up without a response
  }

  void testOtherPurposeIsRefused() {
    const ObservationSecret secret = ObservationSecret::generate();
    const Handshake storage(secret, 1001, ConnectionPurpose::kStorage);
    const Handshake link(secret, 1001, ConnectionPurpose::kLink);
    const Outcome outcome = shake(storage, link);
    CPPUNIT_ASSERT_MESSAGE(outcome.connector, contains(outcome.connector, "storage"));
    CPPUNIT_ASSERT(!outcome.listener.empty());
  }

  void testBlockWithoutProofIsRefused() {
    // A forger that knows the observation id sends a well-formed block header at once.
    const Handshake listener(ObservationSecret::generate(), 1001, ConnectionPurpose::kStorage);
    SocketPair pair;
    std::vector<uint8_t> block(200, 0);
    const uint32_t magic = 0x50435452;
    std::memcpy(block.data(), &magic, 4);
    CPPUNIT_ASSERT_EQUAL(ssize_t(block.size()), ::write(pair.fd[1], block.data(), block.size()));
    std::string error;
    try {
      listener.acceptPeer(pair.fd[0], 2);
    } catch (const HandshakeError& e) {
      error = e.what();
    }
    CPPUNIT_ASSERT_MESSAGE(error, contains(error, "sent a block without answering the challenge"));
  }

  void testListenerWithoutSecretIsNotTrusted() {
    // A process that took the port and accepts anything: the connector sends no data to it.
    const Handshake connector(ObservationSecret::generate(), 1001, ConnectionPurpose::kStorage);
    SocketPair pair;
    auto impostor = std::async(std::launch::async, [&] {
      uint8_t challenge[48] = {'R', 'T', 'C', 'H', 1, 0, 1, 0};
      const uint64_t id = 1001;
      std::memcpy(challenge + 8, &id, 8);
      uint8_t response[72], verdict[40] = {'R', 'T', 'C', 'H', 1, 0, 0, 0};
      return ::write(pair.fd[0], challenge, sizeof challenge) == sizeof challenge &&
             ::read(pair.fd[0], response, sizeof response) == sizeof response &&
             ::write(pair.fd[0], verdict, sizeof verdict) == sizeof verdict;
    });
    std::string error;
    try {
      connector.proveToPeer(pair.fd[1], 5);
    } catch (const HandshakeError& e) {
      error = e.what();
    }
    CPPUNIT_ASSERT(impostor.get());
    CPPUNIT_ASSERT_MESSAGE(error, contains(error, "accepted without proving"));
  }

  void testReplayedResponseIsRefused() {
    // A response recorded from one handshake opens no later one: the nonce differs.
    const ObservationSecret secret = ObservationSecret::generate();
    const Handshake listener(secret, 1001, ConnectionPurpose::kLink);
    std::vector<uint8_t> recorded;
    {
      SocketPair pair;
      auto listening = std::async(std::launch::async, [&] { listener.acceptPeer(pair.fd[0], 5); });
      // Record what the genuine connector sends, passing it on.
      SocketPair tap;
      auto forward = std::async(std::launch::async, [&] {
        return pass(pair.fd[1], tap.fd[0], 48) && pass(tap.fd[0], pair.fd[1], 72, &recorded) &&
               pass(pair.fd[1], tap.fd[0], 40);
      });
      Handshake(secret, 1001, ConnectionPurpose::kLink).proveToPeer(tap.fd[1], 5);
      CPPUNIT_ASSERT(forward.get());
      listening.get();
    }
    SocketPair pair;
    auto replay = std::async(std::launch::async, [&] {
      uint8_t challenge[48];
      return ::recv(pair.fd[1], challenge, 48, MSG_WAITALL) == 48 &&
             ::write(pair.fd[1], recorded.data(), 72) == 72;
    });
    std::string error;
    try {
      listener.acceptPeer(pair.fd[0], 5);
    } catch (const HandshakeError& e) {
      error = e.what();
    }
    CPPUNIT_ASSERT(replay.get());
    CPPUNIT_ASSERT_MESSAGE(error, contains(error, "wrong proof"));
  }

  void testSilentPeerTimesOut() {
    const Handshake listener(ObservationSecret::generate(), 1, ConnectionPurpose::kStorage);
    SocketPair pair;
    const auto start = std::chrono::steady_clock::now();
    CPPUNIT_ASSERT_THROW(listener.acceptPeer(pair.fd[0], 0.3), HandshakeError);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CPPUNIT_ASSERT(seconds >= 0.25 && seconds < 3);
  }

  void testPeerThatHangsUp() {
    const Handshake listener(ObservationSecret::generate(), 1, ConnectionPurpose::kStorage);
    SocketPair pair;
    pair.closeConnector();
    std::string error;
    try {
      listener.acceptPeer(pair.fd[0], 5);
    } catch (const HandshakeError& e) {
      error = e.what();
    }
    CPPUNIT_ASSERT_MESSAGE(error, !error.empty());
  }

  void testSecretNeverOnTheWire() {
    // Everything the connector sends: no 8 consecutive bytes of the secret in it.
    const ObservationSecret secret = ObservationSecret::generate();
    const Handshake listener(secret, 7, ConnectionPurpose::kStorage);
    SocketPair pair, tap;
    auto listening = std::async(std::launch::async, [&] { listener.acceptPeer(pair.fd[0], 5); });
    std::vector<uint8_t> sent;
    auto forward = std::async(std::launch::async, [&] {
      return pass(pair.fd[1], tap.fd[0], 48) && pass(tap.fd[0], pair.fd[1], 72, &sent) &&
             pass(pair.fd[1], tap.fd[0], 40);
    });
    Handshake(secret, 7, ConnectionPurpose::kStorage).proveToPeer(tap.fd[1], 5);
    CPPUNIT_ASSERT(forward.get());
    listening.get();
    const auto key = secret.bytes();
    for (size_t k = 0; k + 8 <= key.size(); ++k)
      CPPUNIT_ASSERT(std::search(sent.begin(), sent.end(), key.begin() + ptrdiff_t(k),
                                 key.begin() + ptrdiff_t(k + 8)) == sent.end());
  }

  void testSecretFileRoundTrip() {
    TempDir dir;
    const std::string path = dir.path + "/observation.secret";
    const ObservationSecret secret = ObservationSecret::generate();
    secret.writeFile(path);
    struct stat status {};
    CPPUNIT_ASSERT_EQUAL(0, ::stat(path.c_str(), &status));
    CPPUNIT_ASSERT_EQUAL(0600u, unsigned(status.st_mode & 0777));
    const ObservationSecret read = ObservationSecret::readFile(path);
    CPPUNIT_ASSERT(std::equal(secret.bytes().begin(), secret.bytes().end(), read.bytes().begin()));
    // The same secret opens a handshake on both sides.
    const Outcome outcome = shake(Handshake(secret, 5, ConnectionPurpose::kLink),
                                  Handshake(read, 5, ConnectionPurpose::kLink));
    CPPUNIT_ASSERT_EQUAL(std::string(), outcome.listener + outcome.connector);
  }

  void testSecretFileReadableByOthersIsRefused() {
    TempDir dir;
    const std::string path = dir.path + "/observation.secret";
    ObservationSecret::generate().writeFile(path);
    CPPUNIT_ASSERT_EQUAL(0, ::chmod(path.c_str(), 0644));
    std::string error;
    try {
      ObservationSecret::readFile(path);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    CPPUNIT_ASSERT_MESSAGE(error, contains(error, path) && contains(error, "mode 0644"));
    CPPUNIT_ASSERT_THROW(ObservationSecret::readFile(dir.path + "/none"), std::runtime_error);
  }

  void testSecretFileNotOverwritten() {
    TempDir dir;
    const std::string path = dir.path + "/observation.secret";
    { std::ofstream(path) << "planted\n"; }
    CPPUNIT_ASSERT_THROW(ObservationSecret::generate().writeFile(path), std::runtime_error);
    std::filesystem::create_symlink(dir.path + "/target", dir.path + "/link");
    CPPUNIT_ASSERT_THROW(ObservationSecret::generate().writeFile(dir.path + "/link"),
                         std::runtime_error);
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path + "/target"));
  }

  void testSecretLineOnStandardInput() {
    // The secret line, then the parset: the rest of the stream is left to read.
    const ObservationSecret secret = ObservationSecret::generate();
    std::istringstream in(secret.line() + "Observation.ObsID = 5\n");
    const ObservationSecret read = ObservationSecret::readLine(in, "standard input");
    CPPUNIT_ASSERT(std::equal(secret.bytes().begin(), secret.bytes().end(), read.bytes().begin()));
    std::string rest;
    std::getline(in, rest);
    CPPUNIT_ASSERT_EQUAL(std::string("Observation.ObsID = 5"), rest);
  }

  void testBadSecretLines() {
    const std::vector<std::string> lines{"", "Observation.ObsID = 5\n", "rtcp-secret 00ff\n",
                                         "rtcp-secret " + std::string(63, 'a') + "g\n"};
    for (const std::string& text : lines) {
      std::istringstream in(text);
      std::string error;
      try {
        ObservationSecret::readLine(in, "stdin");
      } catch (const std::runtime_error& e) {
        error = e.what();
      }
      CPPUNIT_ASSERT_MESSAGE(text, contains(error, "stdin") && contains(error, "rtcp-secret"));
    }
  }

  void testSecretsDiffer() {
    const ObservationSecret a = ObservationSecret::generate(), b = ObservationSecret::generate();
    CPPUNIT_ASSERT(!std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin()));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(HandshakeTest);
