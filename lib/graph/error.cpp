#include "tessera/graph/error.hpp"

#include <algorithm>
#include <cstring>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

namespace tessera {
namespace {

// Messages quote keys briefly, and at most this many of a cycle's.
constexpr size_t kCycleKeysShown = 20;

std::string cycle_message(const std::vector<Key>& cycle) {
  std::string text = "cycle in graph: ";
  const size_t shown = std::min(cycle.size(), kCycleKeysShown);
  for (size_t i = 0; i < shown; ++i) absl::StrAppend(&text, i ? " -> " : "", cycle[i].brief());
  if (shown < cycle.size()) absl::StrAppend(&text, " -> ... (", cycle.size(), " keys)");
  return text;
}

std::string missing_message(const Key& missing, const std::optional<Key>& referrer) {
  if (referrer) {
    return absl::StrCat("missing key ", missing.brief(), ": task ", referrer->brief(),
                        " depends on it, but the graph has no such key");
  }
  return absl::StrCat("missing key ", missing.brief(), ": it was requested, but the graph has no such key");
}

std::string with_context(const std::string& context, std::string message) {
  return context.empty() ? message : absl::StrCat(context, ": ", message);
}

}  // namespace

std::string describe(const std::exception_ptr& e) {
  if (!e) return "no exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

CycleError::CycleError(std::vector<Key> cycle, const std::string& context)
    : Error(with_context(context, cycle_message(cycle))), cycle_(std::move(cycle)) {}

MissingKeyError::MissingKeyError(Key missing, std::optional<Key> referrer, const std::string& context)
    : Error(with_context(context, missing_message(missing, referrer))),
      missing_(std::move(missing)),
      referrer_(std::move(referrer)) {}

TaskError::TaskError(Key key, std::string function, std::exception_ptr original)
    : Error(absl::StrCat("task ", key.brief(), " (", function, ") failed: ", describe(original))),
      key_(std::move(key)),
      function_(std::move(function)),
      message_(describe(original)),
      original_(std::move(original)) {}

namespace {

// 512 bytes, 9.4 KiB, 64.0 MiB, 2.0 GiB.
std::string human_bytes(size_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " bytes");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double x = static_cast<double>(bytes) / 1024;
  int u = 0;
  for (; x >= 1024 && u < 3; ++u) x /= 1024;
  return absl::StrFormat("%.1f %s", x, units[u]);
}

std::string memory_limit_message(const Key& task, size_t needed, size_t limit, size_t held,
                                 const std::vector<MemoryLimitError::Held>& largest, const std::string& why) {
  std::string m = absl::StrCat("memory limit of ", human_bytes(limit), " (", limit, ") cannot be met: task ",
                               task.str(), " needs ", human_bytes(needed), " (", needed, ") ", why, "; ",
                               human_bytes(held), " held");
  for (size_t i = 0; i < largest.size(); ++i) {
    absl::StrAppend(&m, i == 0 ? ", the largest: " : ", ", largest[i].key.str(), " ", human_bytes(largest[i].bytes));
  }
  return m;
}

}  // namespace

MemoryLimitError::MemoryLimitError(Key task, size_t needed, size_t limit, size_t held, std::vector<Held> largest,
                                   const std::string& why)
    : Error(memory_limit_message(task, needed, limit, held, largest, why)),
      task_(std::move(task)),
      needed_(needed),
      limit_(limit),
      held_(held),
      largest_(std::move(largest)) {}

StorageError::StorageError(std::string path, const std::string& what, int err)
    : Error(err != 0 ? absl::StrCat(path, ": ", what, ": ", std::strerror(err))
                     : absl::StrCat(path, ": ", what)),
      path_(std::move(path)),
      errno_(err) {}

}  // namespace tessera
