#include "Hdf5Attributes.h"

#include <stdexcept>

namespace rtcp::storage::hdf5 {

std::mutex& hdf5Mutex() {
  static std::mutex mutex;
  return mutex;
}

Handle::Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
  if (id < 0) throw std::runtime_error("HDF5: cannot " + what);
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    close_ = std::exchange(other.close_, nullptr);
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = H5I_INVALID_HID;
  close_ = nullptr;
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("HDF5: cannot " + what);
}

Handle createGroup(hid_t parent, const std::string& name) {
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                "create group " + name);
}

Handle openGroup(hid_t parent, const std::string& name) {
  return Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, "open group " + name);
}

Handle openDataSet(hid_t parent, const std::string& name) {
  return Handle(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open data set " + name);
}

namespace {

Handle scalarSpace() { return Handle(H5Screate(H5S_SCALAR), H5Sclose, "create a dataspace"); }

Handle arraySpace(size_t count) {
  if (count == 0) return Handle(H5Screate(H5S_NULL), H5Sclose, "create a dataspace");
  const hsize_t dims[1] = {count};
  return Handle(H5Screate_simple(1, dims, nullptr), H5Sclose, "create a dataspace");
}

Handle stringType() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "copy a string type");
  check(H5Tset_size(type, H5T_VARIABLE), "make a variable-length string type");
  return type;
}

/// Creates (replacing) attribute `name` of `object` and writes `data` (none for a null space).
void write(hid_t object, const std::string& name, hid_t fileType, hid_t memoryType,
           const Handle& space, const void* data) {
  if (H5Aexists(object, name.c_str()) > 0)
    check(H5Adelete(object, name.c_str()), "replace attribute " + name);
  const Handle attribute(
      H5Acreate2(object, name.c_str(), fileType, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
      "create attribute " + name);
  if (data) check(H5Awrite(attribute, memoryType, data), "write attribute " + name);
}

}  // namespace

void setString(hid_t object, const std::string& name, const std::string& value) {
  const Handle type = stringType();
  const char* text = value.c_str();
  write(object, name, type, type, scalarSpace(), &text);
}

std::string readString(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) <= 0) return "";
  const Handle attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose,
                         "open attribute " + name);
  const Handle type = stringType();
  char* text = nullptr;
  check(H5Aread(attribute, type, &text), "read attribute " + name);
  std::string value = text ? text : "";
  H5free_memory(text);
  return value;
}

void setStrings(hid_t object, const std::string& name, const std::vector<std::string>& values) {
  const Handle type = stringType();
  std::vector<const char*> texts;
  for (const std::string& value : values) texts.push_back(value.c_str());
  write(object, name, type, type, arraySpace(values.size()),
        values.empty() ? nullptr : texts.data());
}

void setDouble(hid_t object, const std::string& name, double value) {
  write(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, scalarSpace(), &value);
}

void setDoubles(hid_t object, const std::string& name, const std::vector<double>& values) {
  write(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, arraySpace(values.size()),
        values.empty() ? nullptr : values.data());
}

void setUnsigned(hid_t object, const std::string& name, unsigned value) {
  write(object, name, H5T_STD_U32LE, H5T_NATIVE_UINT, scalarSpace(), &value);
}

void setUnsigneds(hid_t object, const std::string& name, const std::vector<unsigned>& values) {
  write(object, name, H5T_STD_U32LE, H5T_NATIVE_UINT, arraySpace(values.size()),
        values.empty() ? nullptr : values.data());
}

void setBool(hid_t object, const std::string& name, bool value) {
  const int flag = value ? 1 : 0;  // the DAL's bool: a 32-bit signed integer
  write(object, name, H5T_STD_I32LE, H5T_NATIVE_INT, scalarSpace(), &flag);
}

}  // namespace rtcp::storage::hdf5
