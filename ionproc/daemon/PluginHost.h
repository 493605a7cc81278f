#pragma once
/// \file PluginHost.h
/// Loads plug-ins (dlopen) and keeps them loaded while their functions can be called.

#include <memory>
#include <string>
#include <vector>

#include "daemon/Plugin.h"

namespace rtcp::ion {

class PluginHost {
 public:
  /// The services plug-ins get; `functions` in it is filled by the plug-ins.
  explicit PluginHost(PluginContext context) : context_(context) {}
  ~PluginHost();
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  /// Loads a plug-in and lets it register its functions; LinkError naming the path and
  /// dlerror() when it cannot be loaded or lacks the entry point, or what it threw.
  void load(const std::string& path);
  const std::vector<std::string>& loaded() const { return paths_; }

 private:
  PluginContext context_;
  std::vector<void*> handles_;
  std::vector<std::string> paths_;
};

}  // namespace rtcp::ion
