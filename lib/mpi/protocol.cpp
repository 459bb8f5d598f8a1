#include "protocol.hpp"

#include <sched.h>

#include <new>
#include <thread>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"
#include "tessera/graph/spill.hpp"
#include "tessera/graph/wire.hpp"

namespace tessera::mpi::detail {
namespace {

// Wide enough for every element type an array may hold, and for SIMD loads.
constexpr std::align_val_t kAlignment{64};

}  // namespace

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(absl::StrCat(what, " failed: ", std::string(text, static_cast<size_t>(length))));
}

Message receive(MPI_Comm comm, const MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m;
  m.size = static_cast<size_t>(count);
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  auto* bytes = static_cast<std::byte*>(::operator new(m.size == 0 ? 1 : m.size, kAlignment));
  m.data = std::shared_ptr<const std::byte>(bytes, [](const std::byte* p) {
    ::operator delete(const_cast<std::byte*>(p), kAlignment);
  });
  check(MPI_Recv(bytes, count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  return m;
}

Value decode(const Message& m, const std::string& what) {
  BytesReader in(m.data, m.size, what);
  return from_wire(in);
}

void Backoff::pause() {
  if (spins_ < 200) {
    ++spins_;
    sched_yield();
    return;
  }
  int step = spins_ - 200;
  if (step < 10) ++spins_;
  std::this_thread::sleep_for(std::chrono::microseconds(10 << (step < 7 ? step : 7)));
}

}  // namespace tessera::mpi::detail
