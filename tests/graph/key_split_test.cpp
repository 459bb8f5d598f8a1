// key_split against dask.utils.key_split: the expected groups are what dask
// 2022.12 returns for the same names (python3 -c "from dask.utils import key_split; ...").
#include <doctest/doctest.h>

#include "tessera/graph/key_split.hpp"

using tessera::Key;
using tessera::key_split;

TEST_CASE("key_split drops tokens as dask does") {
  CHECK(key_split("x") == "x");
  CHECK(key_split("x-1") == "x");
  CHECK(key_split("rechunk-merge-9c1f0a3b2d4e5f60718293a4b5c6d7e8") == "rechunk-merge");
  CHECK(key_split("random_sample-d86e5c0d") == "random_sample");
  CHECK(key_split("hello-world-1") == "hello-world");
  CHECK(key_split("sum-aggregate-a739") == "sum-aggregate");
  CHECK(key_split("x--y") == "x");
  CHECK(key_split("x-") == "x");
}

TEST_CASE("key_split: an 8-letter word starting with a..f is a token, others are words") {
  CHECK(key_split("a-deadbeef-c") == "a");
  CHECK(key_split("task-abcdefgh") == "task");
  CHECK(key_split("a-Deadbeef-c") == "a-Deadbeef-c");
  CHECK(key_split("a-gbcdefgh-x") == "a-gbcdefgh-x");
}

TEST_CASE("key_split: 32 hex digits are data, reprs their last dotted word, odd names Other") {
  CHECK(key_split("a9f3c0e0d1b2c3d4e5f60718293a4b5c") == "data");
  CHECK(key_split("<function f at 0x12>") == "function");
  CHECK(key_split("<module.sub.fn at 1>") == "fn");
  CHECK(key_split("('x-abc', 1)") == "x");
  CHECK(key_split("_(x") == "x");
  CHECK(key_split("-x") == "Other");
  CHECK(key_split(",a") == "Other");
  CHECK(key_split("") == "Other");
}

TEST_CASE("key_split of a tuple key is that of its name") {
  CHECK(key_split(Key("rechunk-split-0123456789abcdef0123456789abcdef", {3, 4})) == "rechunk-split");
  CHECK(key_split(Key("x", {0})) == "x");
}

TEST_CASE("key_label is the group plus the indices") {
  CHECK(tessera::key_label(Key("random_sample-d86e5c0d", {0, 1})) == "random_sample (0, 1)");
  CHECK(tessera::key_label(Key("x", {})) == "x ()");
  CHECK(tessera::key_label(Key("sum-aggregate-a739")) == "sum-aggregate");
}
