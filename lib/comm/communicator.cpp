// The collectives every Communicator gets from its two primitives, and ranks
// that are threads of one process.
#include "tessera/comm/communicator.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>

#include <absl/strings/str_cat.h>

#include "comm/point_to_point.hpp"
#include "tessera/graph/error.hpp"

namespace tessera {

void detail::check_send(const Communicator& comm, int dest, int tag) {
  if (dest < 0 || dest >= comm.size()) {
    throw ValueError(absl::StrCat("send: expected a destination rank in [0, ", comm.size(), "), found ", dest));
  }
  if (tag < 0 || tag > Communicator::kMaxTag) {
    throw ValueError(absl::StrCat("send: expected a tag in [0, ", Communicator::kMaxTag, "], found ", tag));
  }
}

void Communicator::send_parts(int dest, int tag, const std::vector<SharedBytes>& parts) {
  size_t size = 0;
  for (const SharedBytes& p : parts) size += p.size;
  std::vector<std::byte> bytes;
  bytes.reserve(size);
  for (const SharedBytes& p : parts) bytes.insert(bytes.end(), p.data.get(), p.data.get() + p.size);
  send(dest, tag, std::move(bytes));
}

void barrier(Communicator& comm) { (void)comm.allgather(0); }

namespace {

// Every rank's text to rank `root`, or to every rank when `root` is -1: the
// lengths by allgather, then one alltoallv whose send buffer repeats the text
// once per receiving rank. Ranks that receive nothing return an empty vector.
std::vector<std::string> strings_to(Communicator& comm, const std::string& text, int root) {
  const auto size = static_cast<size_t>(comm.size());
  const std::vector<int64_t> lengths = comm.allgather(static_cast<int64_t>(text.size()));
  const bool receives = root < 0 || root == comm.rank();
  std::string send;
  send.reserve(root < 0 ? text.size() * size : text.size());
  std::vector<int64_t> send_counts(size), send_offsets(size), recv_counts(size), recv_offsets(size);
  int64_t recv_total = 0;
  for (size_t q = 0; q < size; ++q) {
    send_offsets[q] = static_cast<int64_t>(send.size());
    if (root < 0 || static_cast<size_t>(root) == q) {
      send_counts[q] = static_cast<int64_t>(text.size());
      send += text;
    }
    recv_offsets[q] = recv_total;
    recv_counts[q] = receives ? lengths[q] : 0;
    recv_total += recv_counts[q];
  }
  std::string recv(static_cast<size_t>(recv_total), '\0');
  comm.alltoallv(reinterpret_cast<const std::byte*>(send.data()), send_counts, send_offsets,
                 reinterpret_cast<std::byte*>(recv.data()), recv_counts, recv_offsets);
  std::vector<std::string> out;
  if (!receives) return out;
  out.reserve(size);
  for (size_t q = 0; q < size; ++q) {
    out.push_back(recv.substr(static_cast<size_t>(recv_offsets[q]), static_cast<size_t>(recv_counts[q])));
  }
  return out;
}

}  // namespace

std::vector<std::string> allgather_strings(Communicator& comm, const std::string& text) {
  return strings_to(comm, text, -1);
}

std::vector<std::string> gather_strings(Communicator& comm, const std::string& text, int root) {
  if (root < 0 || root >= comm.size()) {
    throw ValueError(absl::StrCat("gather_strings: expected a root rank in [0, ", comm.size(), "), found ", root));
  }
  return strings_to(comm, text, root);
}

void agree_on_errors(Communicator& comm, FunctionRef<void()> step) {
  std::string error;
  try {
    step();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "failed (an exception without a message)";
  } catch (...) {
    error = "failed (an exception that is not a std::exception)";
  }
  // One flag per rank first, so that the messages are exchanged only on failure.
  const std::vector<int64_t> failed = comm.allgather(error.empty() ? 0 : 1);
  bool any = false;
  for (int64_t f : failed) any = any || f != 0;
  if (!any) return;
  const std::vector<std::string> messages = allgather_strings(comm, error);
  std::string text;
  for (size_t r = 0; r < messages.size(); ++r) {
    if (failed[r] == 0) continue;
    absl::StrAppend(&text, text.empty() ? "" : "; ", "rank ", r, " of ", messages.size(), ": ", messages[r]);
  }
  throw Error(text);
}

namespace {

// A rank's incoming point-to-point messages: any peer's thread appends, the
// rank's own thread takes from the front, so each sender's messages stay in order.
struct Mailbox {
  std::mutex mutex;
  std::deque<Message> messages;
};

// What the threads of one group share: a cyclic barrier, per rank what it
// posted for the collective in progress, and per rank its mailbox.
struct ThreadGroup {
  explicit ThreadGroup(int n)
      : size(n), posts(static_cast<size_t>(n)), mailboxes(static_cast<size_t>(n)), unsent(static_cast<size_t>(n)) {}

  struct Post {
    const std::byte* send = nullptr;
    std::span<const int64_t> send_counts, send_offsets;
    int64_t value = 0;
  };

  // Returns once all `size` ranks have arrived.
  void arrive() {
    std::unique_lock lock(mutex);
    const uint64_t generation = generation_;
    if (++arrived_ == size) {
      arrived_ = 0;
      ++generation_;
      changed.notify_all();
      return;
    }
    changed.wait(lock, [&] { return generation_ != generation; });
  }

  const int size;
  std::vector<Post> posts;  // element r written by rank r only, between barriers
  std::deque<Mailbox> mailboxes;  // a deque: Mailbox holds a mutex and cannot move
  // per sender: bytes of its messages in the mailboxes, not yet taken by their receiver
  std::vector<std::atomic<size_t>> unsent;
  std::mutex mutex;
  std::condition_variable changed;

 private:
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<ThreadGroup> group, int rank) : group_(std::move(group)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_->size; }

  // Each rank posts its send buffer, then pulls its part of every peer's; the
  // second barrier keeps the senders' buffers alive until every rank has read.
  void alltoallv(const std::byte* send, std::span<const int64_t> send_counts, std::span<const int64_t> send_offsets,
                 std::byte* recv, std::span<const int64_t> recv_counts,
                 std::span<const int64_t> recv_offsets) override {
    auto& mine = group_->posts[static_cast<size_t>(rank_)];
    mine.send = send;
    mine.send_counts = send_counts;
    mine.send_offsets = send_offsets;
    group_->arrive();
    const auto me = static_cast<size_t>(rank_);
    std::string mismatch;
    for (size_t s = 0; s < static_cast<size_t>(group_->size); ++s) {
      const auto& peer = group_->posts[s];
      if (peer.send_counts[me] != recv_counts[s]) {
        mismatch = absl::StrCat("alltoallv: rank ", rank_, " expects ", recv_counts[s], " bytes from rank ", s,
                                ", which sends ", peer.send_counts[me]);
      } else if (recv_counts[s] > 0) {
        std::memcpy(recv + recv_offsets[s], peer.send + peer.send_offsets[me], static_cast<size_t>(recv_counts[s]));
      }
    }
    group_->arrive();  // even on a mismatch: a peer must not wait for this rank forever
    if (!mismatch.empty()) throw ValueError(mismatch);
  }

  std::vector<int64_t> allgather(int64_t value) override {
    group_->posts[static_cast<size_t>(rank_)].value = value;
    group_->arrive();
    std::vector<int64_t> out;
    out.reserve(group_->posts.size());
    for (const auto& p : group_->posts) out.push_back(p.value);
    group_->arrive();
    return out;
  }

  // A message is taken the moment it is sent: it moves into the peer's mailbox
  // (its bytes count as this rank's unfinished_send_bytes until the peer takes it).
  void send(int dest, int tag, std::vector<std::byte> bytes) override {
    detail::check_send(*this, dest, tag);
    Mailbox& box = group_->mailboxes[static_cast<size_t>(dest)];
    group_->unsent[static_cast<size_t>(rank_)].fetch_add(bytes.size(), std::memory_order_relaxed);
    std::lock_guard lock(box.mutex);
    box.messages.push_back(Message{rank_, tag, SharedBytes::from(std::move(bytes))});
  }

  std::optional<Message> try_receive() override {
    Mailbox& box = group_->mailboxes[static_cast<size_t>(rank_)];
    std::lock_guard lock(box.mutex);
    if (box.messages.empty()) return std::nullopt;
    Message m = std::move(box.messages.front());
    box.messages.pop_front();
    taken(m);
    return m;
  }

  // The first message from `source` in the mailbox: a scan, as the mailbox
  // mixes senders (a test's mailboxes hold a few messages).
  std::optional<Message> try_receive_from(int source, FunctionRef<bool(int tag, size_t bytes)> take) override {
    Mailbox& box = group_->mailboxes[static_cast<size_t>(rank_)];
    std::lock_guard lock(box.mutex);
    auto it =
        std::find_if(box.messages.begin(), box.messages.end(), [&](const Message& m) { return m.source == source; });
    if (it == box.messages.end() || !take(it->tag, it->bytes.size)) return std::nullopt;
    Message m = std::move(*it);
    box.messages.erase(it);
    taken(m);
    return m;
  }

  size_t unfinished_sends() override { return 0; }
  size_t unfinished_send_bytes() override {
    return group_->unsent[static_cast<size_t>(rank_)].load(std::memory_order_relaxed);
  }

 private:
  void taken(const Message& m) {
    group_->unsent[static_cast<size_t>(m.source)].fetch_sub(m.bytes.size, std::memory_order_relaxed);
  }

  std::shared_ptr<ThreadGroup> group_;
  int rank_;
};

}  // namespace

std::vector<std::shared_ptr<Communicator>> thread_communicators(int n) {
  if (n < 1) throw ValueError(absl::StrCat("thread_communicators: expected at least 1 rank, found ", n));
  auto group = std::make_shared<ThreadGroup>(n);
  std::vector<std::shared_ptr<Communicator>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_shared<ThreadCommunicator>(group, r));
  return out;
}

}  // namespace tessera
