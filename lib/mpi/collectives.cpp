#include "collectives.hpp"

#include <cstring>
#include <mutex>

#include <absl/strings/str_cat.h>

#include "protocol.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/spill.hpp"
#include "tessera/graph/wire.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::mpi::detail {
namespace {

using spmd::detail::NumberKind;

// Parts of an allgather start at multiples of this, so that arrays read from the
// received buffer are aligned views.
constexpr size_t kPartAlignment = 64;

MPI_Datatype datatype(NumberKind kind) {
  switch (kind) {
    case NumberKind::boolean: return MPI_C_BOOL;
    case NumberKind::i8: return MPI_INT8_T;
    case NumberKind::i16: return MPI_INT16_T;
    case NumberKind::i32: return MPI_INT32_T;
    case NumberKind::i64: return MPI_INT64_T;
    case NumberKind::u8: return MPI_UINT8_T;
    case NumberKind::u16: return MPI_UINT16_T;
    case NumberKind::u32: return MPI_UINT32_T;
    case NumberKind::u64: return MPI_UINT64_T;
    case NumberKind::f32: return MPI_FLOAT;
    case NumberKind::f64: return MPI_DOUBLE;
    case NumberKind::long_double: return MPI_LONG_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op operation(NumberKind kind, spmd::ReduceOp op) {
  if (kind == NumberKind::boolean) {
    // MPI reduces bools with logical ops only: a sum or a maximum is an or.
    return op == spmd::ReduceOp::min ? MPI_LAND : MPI_LOR;
  }
  switch (op) {
    case spmd::ReduceOp::min: return MPI_MIN;
    case spmd::ReduceOp::max: return MPI_MAX;
    case spmd::ReduceOp::sum: break;
  }
  return MPI_SUM;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm group, MPI_Comm peer, int tag, std::vector<int> ids, int rank)
    : group_(group),
      peer_(peer),
      tag_(tag),
      ids_(std::move(ids)),
      rank_(rank),
      notices_(ids_.size()),
      incoming_(ids_.size()),
      receives_(ids_.size(), MPI_REQUEST_NULL) {
  // Receives posted up front: a notice lands in place, and drain() only tests.
  for (size_t r = 0; r < ids_.size(); ++r) {
    if (static_cast<int>(r) == rank_) continue;
    check(MPI_Irecv(incoming_[r].data(), 4, MPI_INT64_T, ids_[r] + 1, tag_, peer_, &receives_[r]),
          "MPI_Irecv of a notice");
  }
}

MpiCommunicator::~MpiCommunicator() {
  for (MPI_Request& r : notice_sends_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);  // point-to-point: may be let go
  }
  for (MPI_Request& r : receives_) {
    if (r == MPI_REQUEST_NULL) continue;  // finish() received it
    MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
}

void MpiCommunicator::post_step() {
  // Counted only once it is sure to be posted: a notice promises the steps posted.
  throw_if_left_before(steps_ + 1);
  ++steps_;
}

void MpiCommunicator::throw_if_left_before(int64_t step) {
  drain();
  for (size_t r = 0; r < notices_.size(); ++r) {
    const Notice& n = notices_[r];
    if (!n.received || n.steps >= step) continue;
    const bool passed_on = n.culprit >= 0;
    my_notice_[2] = passed_on ? n.culprit : ids_[r];
    my_notice_[3] = passed_on ? n.culprit_failed : n.failed;
    throw spmd::BarrierError(spmd::detail::barrier_broken_message(static_cast<int>(my_notice_[2]), my_notice_[3] != 0));
  }
}

void MpiCommunicator::wait(MPI_Request* requests, int n) {
  Backoff backoff;
  for (;;) {
    int done = 0;
    check(MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE), "MPI_Testall in a collective");
    if (done) return;
    throw_if_left_before(steps_);
    backoff.pause();
  }
}

void MpiCommunicator::drain() {
  for (size_t r = 0; r < notices_.size(); ++r) {
    if (receives_[r] == MPI_REQUEST_NULL) continue;  // this rank, or received
    int flag = 0;
    check(MPI_Test(&receives_[r], &flag, MPI_STATUS_IGNORE), "MPI_Test of a notice");
    if (!flag) continue;
    const auto& n = incoming_[r];
    notices_[r] = {n[0], n[1], n[2], n[3], true};
  }
}

void MpiCommunicator::wait_keeping(MPI_Request& request, std::initializer_list<std::shared_ptr<void>> buffers) {
  try {
    wait(&request, 1);
  } catch (...) {
    static std::mutex mu;
    static auto* kept = new std::vector<std::shared_ptr<void>>;  // never freed: MPI may still own them
    std::lock_guard<std::mutex> lock(mu);
    kept->insert(kept->end(), buffers.begin(), buffers.end());
    throw;
  }
}

void MpiCommunicator::barrier(int) {
  if (size() == 1) return;
  post_step();
  MPI_Request request;
  check(MPI_Ibarrier(group_, &request), "MPI_Ibarrier");
  wait(&request, 1);
}

bool MpiCommunicator::allreduce(int, void* inout, NumberKind kind, spmd::ReduceOp op) {
  if (size() == 1) return true;
  post_step();
  // In a buffer of our own, not the caller's: a step abandoned when the apply
  // breaks keeps its buffer.
  auto buffer = std::shared_ptr<long double>(new long double(0));
  int type_size = 0;
  MPI_Type_size(datatype(kind), &type_size);
  std::memcpy(buffer.get(), inout, static_cast<size_t>(type_size));
  MPI_Request request;
  check(MPI_Iallreduce(MPI_IN_PLACE, buffer.get(), 1, datatype(kind), operation(kind, op), group_, &request),
        "MPI_Iallreduce");
  wait_keeping(request, {buffer});
  std::memcpy(inout, buffer.get(), static_cast<size_t>(type_size));
  return true;
}

std::vector<Value> MpiCommunicator::allgather(int, Value value) {
  if (size() == 1) return {std::move(value)};
  auto mine = std::make_shared<std::vector<std::byte>>(to_wire(value));
  // Every rank's size, then this rank's own at the end (the send buffer).
  auto sizes = std::make_shared<std::vector<uint64_t>>(ids_.size() + 1);
  sizes->back() = mine->size();
  post_step();
  MPI_Request request;
  check(MPI_Iallgather(&sizes->back(), 1, MPI_UINT64_T, sizes->data(), 1, MPI_UINT64_T, group_, &request),
        "MPI_Iallgather of the sizes");
  wait_keeping(request, {sizes});
  std::vector<int> counts(ids_.size()), displs(ids_.size());
  uint64_t total = 0;
  for (size_t r = 0; r < ids_.size(); ++r) {
    total = (total + kPartAlignment - 1) / kPartAlignment * kPartAlignment;
    if ((*sizes)[r] > INT32_MAX || total > INT32_MAX) {
      throw Error(absl::StrCat("allgather: ", total + (*sizes)[r],
                               " bytes in all exceed MPI's limit of 2^31-1 bytes per collective"));
    }
    counts[r] = static_cast<int>((*sizes)[r]);
    displs[r] = static_cast<int>(total);
    total += (*sizes)[r];
  }
  Message all;  // one aligned buffer; every part is read in place
  auto* bytes = static_cast<std::byte*>(::operator new(total == 0 ? 1 : total, std::align_val_t(kPartAlignment)));
  all.data = std::shared_ptr<const std::byte>(bytes, [](const std::byte* p) {
    ::operator delete(const_cast<std::byte*>(p), std::align_val_t(kPartAlignment));
  });
  post_step();
  check(MPI_Iallgatherv(mine->data(), static_cast<int>(mine->size()), MPI_BYTE, bytes, counts.data(), displs.data(),
                        MPI_BYTE, group_, &request),
        "MPI_Iallgatherv");
  wait_keeping(request, {mine, std::const_pointer_cast<std::byte>(all.data)});
  std::vector<Value> out;
  out.reserve(ids_.size());
  for (size_t r = 0; r < ids_.size(); ++r) {
    BytesReader in(std::shared_ptr<const std::byte>(all.data, bytes + displs[r]), (*sizes)[r],
                   absl::StrCat("allgather: the value of engine ", ids_[r]));
    out.push_back(from_wire(in));
  }
  return out;
}

void MpiCommunicator::leave(int, bool failed) {
  if (left_) return;
  left_ = true;
  if (size() == 1) return;
  my_notice_[0] = steps_;
  my_notice_[1] = failed ? 1 : 0;
  notice_sends_.assign(ids_.size(), MPI_REQUEST_NULL);
  for (size_t r = 0; r < ids_.size(); ++r) {
    if (static_cast<int>(r) == rank_) continue;
    check(MPI_Isend(my_notice_, 4, MPI_INT64_T, ids_[r] + 1, tag_, peer_, &notice_sends_[r]), "MPI_Isend of a notice");
  }
}

bool MpiCommunicator::finish() {
  if (!left_) leave(rank_, true);
  if (size() == 1) return true;
  Backoff backoff;
  for (;;) {
    drain();
    bool all = true;
    for (size_t r = 0; r < notices_.size(); ++r) all = all && (static_cast<int>(r) == rank_ || notices_[r].received);
    if (all) break;
    backoff.pause();
  }
  check(MPI_Waitall(static_cast<int>(notice_sends_.size()), notice_sends_.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall of the notices");
  for (size_t r = 0; r < notices_.size(); ++r) {
    if (static_cast<int>(r) != rank_ && notices_[r].steps != steps_) return false;
  }
  return true;
}

}  // namespace tessera::mpi::detail
