// A plug-in for the daemon tests: serves TestFunctions.h.
#include <stdexcept>
#include <string>

#include "TestFunctions.h"
#include "daemon/Plugin.h"

RTCP_PLUGIN(context) {
  using namespace rtcp::ion;
  context.functions.serve(test::scaleAndSum,
                          [](int32_t factor, std::span<const float> in, OutArray<float>& out,
                             int64_t& count, std::span<const int16_t> extra) {
                            std::span<float> result = out.allocate(in.size());
                            for (size_t i = 0; i < in.size(); ++i)
                              result[i] = float(factor) * in[i];
                            count = int64_t(in.size() + extra.size());
                            double sum = 0;
                            for (int16_t e : extra) sum += e;
                            return sum;
                          });
  context.functions.serve(test::failing, [](int32_t code) -> int32_t {
    throw std::runtime_error("failed with code " + std::to_string(code));
  });
}
