#pragma once
/// \file LinkProtocol.h
/// The FCNP protocol between the compute ranks and ionproc (DESIGN §1), as Blue Gene/P's
/// collective-network protocol had it: the compute side always initiates with a request
/// {read or write, rank, core, size, up to 240 bytes of inline head}; ionproc acknowledges
/// once its side has posted the matching operation for that core and no other transfer
/// occupies the link in that direction, with the agreed size (the smaller of the two) and
/// its own inline head; then the bulk data flows with no per-chunk protocol.
///
/// "read" and "write" are seen from the compute side: a read moves data ionproc -> compute,
/// a write compute -> ionproc. All fields are little-endian (the native order here).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rtcp::ion {

static_assert(std::endian::native == std::endian::little, "the link sends fields as they are");

constexpr size_t kMaxHeadSize = 240;  ///< inline head bytes in a request or acknowledgement

/// A failure of the link: a lost connection, a protocol violation, a refused request.
class LinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LinkOp : uint8_t {
  kRead = 1,   ///< ionproc -> compute
  kWrite = 2,  ///< compute -> ionproc
};
const char* toString(LinkOp op);

/// Acknowledgement status.
enum class LinkStatus : uint8_t {
  kOk = 0,
  kRefused = 1,  ///< ionproc posted no matching operation (the head says why)
};

/// Fixed part of a request (compute -> ionproc); `headSize` head bytes follow.
struct RequestHeader {
  uint8_t magic = 'F';
  uint8_t op = 0;        ///< LinkOp
  uint8_t headSize = 0;  ///< <= kMaxHeadSize
  uint8_t reserved = 0;
  int32_t rank = 0;  ///< compute rank
  int32_t core = 0;  ///< core (thread) within the rank
  int32_t reserved2 = 0;
  uint64_t size = 0;  ///< bulk bytes the compute side offers (write) or accepts (read)
};
static_assert(sizeof(RequestHeader) == 24);

/// Fixed part of an acknowledgement (ionproc -> compute); `headSize` head bytes follow,
/// then, for a read, the `size` bulk bytes.
struct AckHeader {
  uint8_t magic = 'A';
  uint8_t op = 0;  ///< LinkOp of the request it answers
  uint8_t headSize = 0;
  uint8_t status = 0;  ///< LinkStatus
  int32_t reserved = 0;
  uint64_t size = 0;  ///< agreed bulk bytes: min(requested, posted)
};
static_assert(sizeof(AckHeader) == 16);

/// Where the link listens or connects: `tcp:HOST:PORT` (crosses hosts) or `unix:PATH`
/// (same host).
struct LinkEndpoint {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;   ///< tcp
  uint16_t port = 0;  ///< tcp; 0 when listening: any free port
  std::string path;   ///< unix

  /// Parses a descriptor; throws LinkError naming it and the problem.
  static LinkEndpoint parse(const std::string& text);
  std::string toString() const;
};

}  // namespace rtcp::ion
