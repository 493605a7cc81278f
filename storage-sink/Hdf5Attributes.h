#pragma once
/// \file Hdf5Attributes.h
/// A thin layer over HDF5's C API for LOFAR's beam-formed files: handles that close
/// themselves, groups, and attributes in the types the DAL (LOFAR's Data Access Library)
/// reads and writes — strings as variable-length C strings, unsigned as 32-bit unsigned,
/// bool as 32-bit signed, double as 64-bit float, vectors as one-dimensional arrays (an empty
/// vector as a null dataspace). Every failure throws std::runtime_error naming the object.
///
/// HDF5 as Debian builds it is not thread-safe: every call goes under hdf5Mutex().

#include <hdf5.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rtcp::storage::hdf5 {

/// The lock every HDF5 call of the process takes.
std::mutex& hdf5Mutex();

/// An HDF5 identifier with its close function.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what);
  Handle(Handle&& other) noexcept { *this = std::move(other); }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset();
  hid_t id() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

/// Throws std::runtime_error("HDF5: <what>") when status is negative.
void check(herr_t status, const std::string& what);

Handle createGroup(hid_t parent, const std::string& name);
/// An existing group or data set of `parent`.
Handle openGroup(hid_t parent, const std::string& name);
Handle openDataSet(hid_t parent, const std::string& name);
/// A scalar string attribute; "" when `object` has no attribute `name`.
std::string readString(hid_t object, const std::string& name);

void setString(hid_t object, const std::string& name, const std::string& value);
void setStrings(hid_t object, const std::string& name, const std::vector<std::string>& values);
void setDouble(hid_t object, const std::string& name, double value);
void setDoubles(hid_t object, const std::string& name, const std::vector<double>& values);
void setUnsigned(hid_t object, const std::string& name, unsigned value);
void setUnsigneds(hid_t object, const std::string& name, const std::vector<unsigned>& values);
void setBool(hid_t object, const std::string& name, bool value);

}  // namespace rtcp::storage::hdf5
