// One exchange of point-to-point messages that every Communicator must pass,
// run by each rank on its own thread (thread_communicators) or process (MPI).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "tessera/comm/communicator.hpp"

namespace tessera::testing {

// Byte i of message `seq` from `source`: a pattern a swapped, cut or mixed-up
// message does not keep.
inline std::byte message_byte(int source, int seq, size_t i) {
  return static_cast<std::byte>((source * 131 + seq * 31 + static_cast<int>(i) * 7) & 0xff);
}

// Every rank sends `per_peer` messages to every rank (itself included), of the
// sizes in `sizes` in turn, tagged seq % (kMaxTag + 1), with an allgather in the
// middle that the messages must not disturb; then receives until it has all of
// them and checks that each sender's arrived in order, whole. Returns once the
// rank's own sends are taken. `in_parts`: each message goes by send_parts, in
// three parts (a third, 5 bytes, the rest; some of them empty).
inline void exchange_in_order(Communicator& comm, int per_peer, const std::vector<size_t>& sizes, bool in_parts = false) {
  const int n = comm.size();
  auto message = [&](int source, int seq) {
    std::vector<std::byte> b(sizes[static_cast<size_t>(seq) % sizes.size()]);
    for (size_t i = 0; i < b.size(); ++i) b[i] = message_byte(source, seq, i);
    return b;
  };
  auto send = [&](int q, int seq) {
    const int tag = seq % (Communicator::kMaxTag + 1);
    if (!in_parts) return comm.send(q, tag, message(comm.rank(), seq));
    const auto b = std::make_shared<const std::vector<std::byte>>(message(comm.rank(), seq));
    const size_t third = b->size() / 3, next = std::min(b->size(), third + 5);
    auto part = [&](size_t from, size_t to) { return SharedBytes{std::shared_ptr<const std::byte>(b, b->data() + from), to - from}; };
    comm.send_parts(q, tag, {part(0, third), part(third, next), part(next, b->size())});
  };
  for (int seq = 0; seq < per_peer; ++seq) {
    for (int q = 0; q < n; ++q) send(q, seq);
    if (seq == per_peer / 2) CHECK(comm.allgather(comm.rank() + 1)[static_cast<size_t>(n - 1)] == n);
  }
  std::vector<int> next(static_cast<size_t>(n), 0);
  int missing = n * per_peer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (missing > 0 && std::chrono::steady_clock::now() < deadline) {
    std::optional<Message> m = comm.try_receive();
    if (!m) {
      comm.unfinished_sends();  // progress, so that peers' receives of large messages complete
      std::this_thread::yield();
      continue;
    }
    REQUIRE(m->source >= 0);
    REQUIRE(m->source < n);
    int& seq = next[static_cast<size_t>(m->source)];
    CHECK(m->tag == seq % (Communicator::kMaxTag + 1));
    CHECK(std::ranges::equal(m->bytes.span(), message(m->source, seq)));
    ++seq;
    --missing;
  }
  CHECK(missing == 0);
  while (comm.unfinished_sends() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  CHECK(comm.unfinished_sends() == 0);
  CHECK(!comm.try_receive().has_value());
  barrier(comm);  // nobody sends again before every rank has checked that nothing is left
  CHECK(comm.unfinished_send_bytes() == 0);  // every peer took this rank's messages: their bytes are gone
}

// Every rank sends every peer a message of `big` bytes (tag 1), then one of 3
// bytes (tag 2). Each rank refuses each peer's big one through
// try_receive_from (it sees its tag and size, and it stays first from that
// peer: the small one behind it is not given instead), then takes both, in
// order and whole -- on two ranks the big one through try_receive, which must
// give the message left waiting before any other.
inline void receive_from_when_taken(Communicator& comm, size_t big) {
  const int n = comm.size();
  auto message = [&](int source, int seq, size_t size) {
    std::vector<std::byte> b(size);
    for (size_t i = 0; i < b.size(); ++i) b[i] = message_byte(source, seq, i);
    return b;
  };
  for (int q = 0; q < n; ++q) {
    if (q == comm.rank()) continue;
    comm.send(q, 1, message(comm.rank(), 0, big));
    comm.send(q, 2, message(comm.rank(), 1, 3));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // The next message from `q` as `take` takes it, waiting up to the deadline for one to come.
  auto next_from = [&](int q, auto&& take) {
    for (;;) {
      bool seen = false;
      std::optional<Message> m = comm.try_receive_from(q, [&](int tag, size_t bytes) {
        seen = true;
        return take(tag, bytes);
      });
      if (seen || std::chrono::steady_clock::now() > deadline) return m;
      comm.unfinished_sends();
      std::this_thread::yield();
    }
  };
  for (int q = 0; q < n; ++q) {
    if (q == comm.rank()) continue;
    CAPTURE(q);
    for (int twice = 0; twice < 2; ++twice) {
      int tag = -1;
      size_t size = 0;
      CHECK(!next_from(q, [&](int t, size_t bytes) {
               tag = t;
               size = bytes;
               return false;
             }).has_value());
      CHECK(tag == 1);
      CHECK(size == big);
    }
    std::optional<Message> m = n == 2 ? comm.try_receive() : next_from(q, [](int, size_t) { return true; });
    REQUIRE(m.has_value());
    CHECK(m->source == q);
    CHECK(m->tag == 1);
    CHECK(std::ranges::equal(m->bytes.span(), message(q, 0, big)));
    m = next_from(q, [](int, size_t) { return true; });
    REQUIRE(m.has_value());
    CHECK(m->tag == 2);
    CHECK(std::ranges::equal(m->bytes.span(), message(q, 1, 3)));
  }
  while (comm.unfinished_sends() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  barrier(comm);
  CHECK(!comm.try_receive().has_value());
  barrier(comm);
}

}  // namespace tessera::testing
