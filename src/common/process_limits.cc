#include "common/process_limits.h"

#include <sys/resource.h>

#include "common/log.h"
#include "common/log_events.h"

namespace cowboy {

std::uint64_t raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    rlimit raised = r;
    raised.rlim_cur = r.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  log::info(log::event::kDescriptorLimit, log::field("soft", static_cast<std::uint64_t>(r.rlim_cur)),
            log::field("hard", static_cast<std::uint64_t>(r.rlim_max)));
  return r.rlim_cur;
}

}  // namespace cowboy
