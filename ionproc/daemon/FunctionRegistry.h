#pragma once
/// \file FunctionRegistry.h
/// The functions compute ranks may call on ionproc, by id (a hash of the name), as
/// plug-ins register them. Header-only, so plug-ins need none of the host's symbols.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Forwarding.h"

namespace rtcp::ion {

class FunctionRegistry {
 public:
  struct Function {
    std::string name;
    uint32_t id = 0;
    uint32_t signature = 0;
    forwarding::Dispatcher dispatch;
    /// The most input bulk bytes a call may bring (what the observation needs): a larger
    /// request is refused before anything is allocated.
    uint64_t maxInputBytes = UINT64_MAX;
  };

  /// Serves a forwarded function with an implementation taking ionproc's argument types
  /// (Forwarding.h); LinkError when a function of that name or id is registered already.
  /// maxInputBytes: the bound on a call's input bulk (0 for functions without array inputs).
  template <typename Signature, typename Implementation>
  void serve(const Forwarded<Signature>& function, Implementation implementation,
             uint64_t maxInputBytes = UINT64_MAX) {
    add({function.name(), function.id(), function.signature(),
         function.dispatcher(std::move(implementation)), maxInputBytes});
  }

  void add(Function function) {
    const auto [it, inserted] = functions_.try_emplace(function.id, function);
    if (!inserted)
      throw LinkError("forwarded function '" + function.name + "' clashes with '" +
                      it->second.name + "' (same id)");
  }
  const Function* find(uint32_t id) const {
    const auto it = functions_.find(id);
    return it == functions_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const auto& [id, f] : functions_) result.push_back(f.name);
    return result;
  }
  void clear() { functions_.clear(); }

 private:
  std::map<uint32_t, Function> functions_;
};

}  // namespace rtcp::ion
