#include "daemon/PluginHost.h"

#include <dlfcn.h>

#include "rtcp/Logger.h"

namespace rtcp::ion {

PluginHost::~PluginHost() {
  context_.functions.clear();  // their code lives in the plug-ins
  if (context_.summaries) context_.summaries->clear();
  for (auto it = handles_.rbegin(); it != handles_.rend(); ++it) dlclose(*it);
}

void PluginHost::load(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw LinkError("cannot load plug-in " + path + ": " + dlerror());
  auto entry = reinterpret_cast<PluginEntryPoint>(dlsym(handle, kPluginEntryPoint));
  if (!entry) {
    const std::string why = dlerror();
    dlclose(handle);
    throw LinkError("plug-in " + path + " has no entry point " + kPluginEntryPoint + ": " + why);
  }
  handles_.push_back(handle);
  paths_.push_back(path);
  try {
    entry(context_);
  } catch (const std::exception& e) {
    throw LinkError("plug-in " + path + " failed to register: " + e.what());
  }
  RTCP_LOG_INFO("ionproc", "loaded plug-in " << path);
}

}  // namespace rtcp::ion
