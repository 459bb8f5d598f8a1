// A failure on one rank as every rank raises it (see the header).
#include "rank_error.hpp"

#include <memory>
#include <string_view>
#include <utility>

#include <absl/strings/str_cat.h>

#include "tessera/graph/spill.hpp"

namespace tessera::detail {
namespace {

// The message's fields in their Spillable forms (tessera/graph/spill.hpp).
void put_string(SpillWriter& w, std::string_view s) { Spillable<std::string>::serialize(std::string(s), w); }
std::string get_string(SpillReader& r) { return Spillable<std::string>::deserialize(r); }
using Indices = std::vector<int64_t>;  // a key's
void put_key(SpillWriter& w, const Key& k) {
  put_string(w, k.name());
  Spillable<Indices>::serialize(Indices(k.index().begin(), k.index().end()), w);
}
Key get_key(SpillReader& r) {
  std::string name = get_string(r);
  return Key(name, Spillable<Indices>::deserialize(r));
}

// The reason in a MemoryLimitError's message ("to start, and nothing held can
// spill"): what follows the bytes the task needs, up to the bytes held.
std::string memory_why(const MemoryLimitError& e) {
  const std::string what = e.what();
  const std::string after = absl::StrCat(" (", e.needed(), ") ");
  const size_t from = what.find(after);
  if (from == std::string::npos) return "";
  const size_t start = from + after.size();
  return what.substr(start, what.find("; ", start) - start);
}

}  // namespace

RemoteError remote_error(const std::exception_ptr& error, int rank) {
  RemoteError d;
  d.rank = rank;
  try {
    std::rethrow_exception(error);
  } catch (const TaskError& e) {
    d.kind = RemoteError::kTask;
    d.key_name = e.key().name();
    d.key_index.assign(e.key().index().begin(), e.key().index().end());
    d.function = e.function();
    d.message = e.message();
  } catch (const MemoryLimitError& e) {
    d.kind = RemoteError::kMemory;
    d.key_name = e.task().name();
    d.key_index.assign(e.task().index().begin(), e.task().index().end());
    d.message = memory_why(e);
    d.needed = e.needed();
    d.limit = e.limit();
    d.held = e.held();
    d.largest = e.largest();
  } catch (const std::exception& e) {
    d.message = e.what();
  } catch (...) {
    d.message = "failed (an exception that is not a std::exception)";
  }
  return d;
}

std::vector<std::byte> encode_error(const RemoteError& e) {
  BytesWriter w;
  w.put<uint8_t>(e.kind);
  if (e.kind != RemoteError::kOther) put_key(w, Key(e.key_name, e.key_index));
  if (e.kind == RemoteError::kTask) put_string(w, e.function);
  put_string(w, e.message);
  if (e.kind == RemoteError::kMemory) {
    w.put<uint64_t>(e.needed);
    w.put<uint64_t>(e.limit);
    w.put<uint64_t>(e.held);
    w.put<uint64_t>(e.largest.size());
    for (const MemoryLimitError::Held& h : e.largest) {
      put_key(w, h.key);
      w.put<uint64_t>(h.bytes);
    }
  }
  return std::move(w.bytes());
}

RemoteError decode_error(std::span<const std::byte> bytes, int source) {
  auto holder = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
  BytesReader r(std::shared_ptr<const std::byte>(holder, holder->data()), holder->size(),
                absl::StrCat("an error from rank ", source));
  RemoteError e;
  e.rank = source;
  const auto kind = r.get<uint8_t>();
  if (kind > RemoteError::kMemory) {
    throw Error(absl::StrCat("an error from rank ", source, " of kind ", int{kind}, ", expected 0 to 2"));
  }
  e.kind = static_cast<RemoteError::Kind>(kind);
  if (e.kind != RemoteError::kOther) {
    const Key k = get_key(r);
    e.key_name = k.name();
    e.key_index.assign(k.index().begin(), k.index().end());
  }
  if (e.kind == RemoteError::kTask) e.function = get_string(r);
  e.message = get_string(r);
  if (e.kind == RemoteError::kMemory) {
    e.needed = r.get<uint64_t>();
    e.limit = r.get<uint64_t>();
    e.held = r.get<uint64_t>();
    const auto n = r.get<uint64_t>();
    if (n > r.remaining()) throw Error(absl::StrCat("an error from rank ", source, " lists ", n, " held results in ", r.remaining(), " bytes"));
    for (uint64_t i = 0; i < n; ++i) {
      Key k = get_key(r);
      e.largest.push_back({std::move(k), static_cast<size_t>(r.get<uint64_t>())});
    }
  }
  return e;
}

std::exception_ptr rank_error(const RemoteError& e) {
  const Key key(e.key_name, e.key_index);
  switch (e.kind) {
    case RemoteError::kTask:
      return std::make_exception_ptr(
          TaskError(key, e.function, std::make_exception_ptr(Error(absl::StrCat("on rank ", e.rank, ": ", e.message)))));
    case RemoteError::kMemory:
      return std::make_exception_ptr(MemoryLimitError(key, e.needed, e.limit, e.held, e.largest,
                                                      absl::StrCat("on rank ", e.rank, " ", e.message)));
    case RemoteError::kOther:
      break;
  }
  return std::make_exception_ptr(Error(absl::StrCat("on rank ", e.rank, ": ", e.message)));
}

void agree_on_task_errors(Communicator& comm, FunctionRef<void()> step) {
  std::exception_ptr own;
  try {
    step();
  } catch (...) {
    own = std::current_exception();
  }
  const std::vector<int64_t> kinds =
      comm.allgather(own ? int64_t{1} + remote_error(own, comm.rank()).kind : int64_t{0});
  int first = -1;
  for (size_t r = 0; r < kinds.size() && first < 0; ++r) {
    if (kinds[r] > 1) first = static_cast<int>(r);
  }
  if (first < 0) {  // no task's error: agree_on_errors' message, naming every rank that failed
    agree_on_errors(comm, [&] {
      if (own) std::rethrow_exception(own);
    });
    return;
  }
  const std::vector<std::byte> mine = comm.rank() == first ? encode_error(remote_error(own, first)) : std::vector<std::byte>();
  const std::string said = allgather_strings(comm, std::string(reinterpret_cast<const char*>(mine.data()), mine.size()))
      [static_cast<size_t>(first)];
  std::rethrow_exception(rank_error(decode_error(std::as_bytes(std::span(said.data(), said.size())), first)));
}

}  // namespace tessera::detail
