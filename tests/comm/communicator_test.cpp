// Point-to-point messages between ranks that are threads of this process
// (thread_communicators); tests/mpi/point_to_point_test.cpp runs the same
// exchange over MPI.
#include <doctest/doctest.h>

#include <functional>
#include <thread>
#include <vector>

#include "comm/point_to_point_checks.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;

namespace {

void on_every_rank(int n, const std::function<void(Communicator&)>& f) {
  const auto comms = thread_communicators(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { f(*comms[static_cast<size_t>(r)]); });
  for (auto& t : threads) t.join();
}

}  // namespace

TEST_CASE("messages between each pair of thread ranks arrive in order, whole, beside the collectives") {
  for (int n : {1, 2, 4}) {
    CAPTURE(n);
    on_every_rank(n, [](Communicator& comm) { testing::exchange_in_order(comm, 300, {0, 1, 17, 4096}); });
  }
}

TEST_CASE("a message sent in parts to a thread rank arrives whole, in order with the others") {
  on_every_rank(3, [](Communicator& comm) { testing::exchange_in_order(comm, 100, {0, 1, 17, 4096}, /*in_parts=*/true); });
}

TEST_CASE("try_receive_from leaves a message it does not take first from its sender, and takes it later whole") {
  for (int n : {2, 3}) {
    CAPTURE(n);
    on_every_rank(n, [](Communicator& comm) { testing::receive_from_when_taken(comm, 4096); });
  }
}

TEST_CASE("a thread rank with no message waiting receives nothing and never blocks") {
  const auto comms = thread_communicators(2);
  CHECK(!comms[0]->try_receive().has_value());
  comms[1]->send(0, 5, std::vector<std::byte>(3));
  CHECK(comms[1]->unfinished_sends() == 0);
  CHECK(comms[1]->unfinished_send_bytes() == 3);  // in rank 0's mailbox until rank 0 takes it
  const auto m = comms[0]->try_receive();
  CHECK(comms[1]->unfinished_send_bytes() == 0);
  REQUIRE(m.has_value());
  CHECK(m->source == 1);
  CHECK(m->tag == 5);
  CHECK(m->bytes.size == 3);
  CHECK(!comms[0]->try_receive().has_value());
}

TEST_CASE("send refuses a rank or a tag out of range") {
  const auto comms = thread_communicators(2);
  CHECK_THROWS_WITH_AS(comms[0]->send(2, 0, {}), "send: expected a destination rank in [0, 2), found 2", ValueError);
  CHECK_THROWS_WITH_AS(comms[0]->send(-1, 0, {}), "send: expected a destination rank in [0, 2), found -1", ValueError);
  CHECK_THROWS_WITH_AS(comms[0]->send(1, 8192, {}), "send: expected a tag in [0, 8191], found 8192", ValueError);
  CHECK_THROWS_WITH_AS(comms[0]->send(1, -3, {}), "send: expected a tag in [0, 8191], found -3", ValueError);
  CHECK(!comms[1]->try_receive().has_value());
}

TEST_CASE("gather_strings: every rank's string on the root only, in rank order") {
  for (int n : {1, 3}) {
    for (int root = 0; root < n; ++root) {
      CAPTURE(n);
      CAPTURE(root);
      on_every_rank(n, [root](Communicator& comm) {
        const std::vector<std::string> got = gather_strings(comm, std::string(static_cast<size_t>(comm.rank()) + 1, 'a' + comm.rank()), root);
        if (comm.rank() == root) {
          REQUIRE(got.size() == static_cast<size_t>(comm.size()));
          for (int q = 0; q < comm.size(); ++q) CHECK(got[static_cast<size_t>(q)] == std::string(static_cast<size_t>(q) + 1, 'a' + q));
        } else {
          CHECK(got.empty());
        }
      });
    }
  }
}

TEST_CASE("gather_strings refuses a root outside the ranks") {
  const auto comms = thread_communicators(1);
  CHECK_THROWS_WITH_AS(gather_strings(*comms[0], "x", 1), "gather_strings: expected a root rank in [0, 1), found 1",
                       ValueError);
  CHECK_THROWS_WITH_AS(gather_strings(*comms[0], "x", -1), "gather_strings: expected a root rank in [0, 1), found -1",
                       ValueError);
}
