// The wire form of Values (tessera/graph/wire.hpp): what crosses to another process.
#include <doctest/doctest.h>

#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/graph/wire.hpp"

using tessera::BytesReader;
using tessera::Value;
using tessera::ValueList;

namespace {

std::shared_ptr<const std::byte> share(std::vector<std::byte> bytes) {
  auto owner = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  return std::shared_ptr<const std::byte>(owner, owner->data());
}

Value round_trip(const Value& v) {
  std::vector<std::byte> bytes = tessera::to_wire(v);
  const size_t size = bytes.size();
  BytesReader r(share(std::move(bytes)), size, "a test message");
  Value back = tessera::from_wire(r);
  CHECK(r.remaining() == 0);
  return back;
}

std::string error_of(std::vector<std::byte> bytes) {
  const size_t size = bytes.size();
  BytesReader r(share(std::move(bytes)), size, "a test message");
  try {
    tessera::from_wire(r);
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "no error";
}

struct NoWireForm {
  int x = 0;
};

}  // namespace

TEST_CASE("wire: scalars, strings and vectors come back equal and of their type") {
  CHECK(round_trip(Value(42)).as<int>() == 42);
  CHECK(round_trip(Value(int64_t{-7})).as<int64_t>() == -7);
  CHECK(round_trip(Value(uint8_t{200})).as<uint8_t>() == 200);
  CHECK(round_trip(Value(2.5)).as<double>() == 2.5);
  CHECK(round_trip(Value(1.5f)).as<float>() == 1.5f);
  CHECK(round_trip(Value(true)).as<bool>() == true);
  CHECK(round_trip(Value(std::complex<double>(1, -2))).as<std::complex<double>>() == std::complex<double>(1, -2));
  CHECK(round_trip(Value(std::string("hello"))).as<std::string>() == "hello");
  CHECK(round_trip(Value(std::string())).as<std::string>().empty());
  CHECK(round_trip(Value(std::vector<double>{1, 2, 3})).as<std::vector<double>>() == std::vector<double>{1, 2, 3});
  const std::vector<std::string> names{"a.txt", "", "b/c.txt"};
  CHECK(round_trip(Value(names)).as<std::vector<std::string>>() == names);
  CHECK_FALSE(round_trip(Value()).has_value());
}

TEST_CASE("wire: lists and namespaces carry Values of every kind, nested") {
  ValueList inner{Value(1), Value(std::string("two"))};
  ValueList outer{Value(inner), Value(), Value(3.0)};
  const Value back = round_trip(Value(outer));
  const auto& list = back.as<ValueList>();
  REQUIRE(list.size() == 3);
  CHECK(list[0].as<ValueList>()[1].as<std::string>() == "two");
  CHECK_FALSE(list[1].has_value());
  CHECK(list[2].as<double>() == 3.0);

  std::map<std::string, Value> ns{{"rank", Value(3)}, {"files", Value(std::vector<std::string>{"x"})}};
  const auto& got = round_trip(Value(ns)).as<std::map<std::string, Value>>();
  CHECK(got.at("rank").as<int>() == 3);
  CHECK(got.at("files").as<std::vector<std::string>>() == std::vector<std::string>{"x"});
}

TEST_CASE("wire: a type without a wire form is refused at the sender, naming it") {
  try {
    tessera::to_wire(Value(ValueList{Value(NoWireForm{})}));
    FAIL("expected TypeError");
  } catch (const tessera::TypeError& e) {
    const std::string what = e.what();
    CHECK(what.find("cannot send a value of type") != std::string::npos);
    CHECK(what.find("NoWireForm") != std::string::npos);
    CHECK(what.find("tessera::Spillable") != std::string::npos);
  }
}

TEST_CASE("wire: damaged bytes are an error that says what was expected and found, never a value") {
  std::vector<std::byte> good = tessera::to_wire(Value(std::vector<int32_t>{1, 2, 3, 4}));

  SUBCASE("cut short") {
    std::vector<std::byte> cut(good.begin(), good.begin() + 6);  // inside the type's name
    CHECK(error_of(cut).find("a test message ends at byte 6, ") != std::string::npos);
  }
  SUBCASE("a count larger than the bytes that follow") {
    tessera::BytesWriter w;
    const char* name = typeid(std::vector<int32_t>).name();
    w.put(static_cast<uint32_t>(std::strlen(name)));
    w.write(name, std::strlen(name));
    w.put(uint64_t{1} << 60);
    w.write(good.data(), 16);
    const std::string what = error_of(std::move(w.bytes()));
    CHECK(what.find("announces 1152921504606846976 items of 4 bytes, but only 16 bytes are left") != std::string::npos);
  }
  SUBCASE("a type this program does not know") {
    tessera::BytesWriter w;
    const std::string name = "N7nowhere4TypeE";
    w.put(static_cast<uint32_t>(name.size()));
    w.write(name.data(), name.size());
    const std::string what = error_of(std::move(w.bytes()));
    CHECK(what.find("has type nowhere::Type, which this process does not know") != std::string::npos);
  }
  SUBCASE("a type name longer than any") {
    tessera::BytesWriter w;
    w.put(uint32_t{1} << 20);
    CHECK(error_of(std::move(w.bytes())).find("at most 4096 bytes, found a length of 1048576") != std::string::npos);
  }
  SUBCASE("a bool that is neither 0 nor 1") {
    std::vector<std::byte> b = tessera::to_wire(Value(true));
    b.back() = std::byte{7};
    CHECK(error_of(b).find("expected 0 or 1, found 7") != std::string::npos);
  }
}

TEST_CASE("wire: nesting is bounded on both sides") {
  Value v(1);
  for (int i = 0; i < 70; ++i) v = Value(ValueList{v});
  try {
    tessera::to_wire(v);
    FAIL("expected an error");
  } catch (const tessera::Error& e) {
    CHECK(std::string(e.what()).find("nests more than 64 levels") != std::string::npos);
  }
  // A message that claims deeper nesting than any sender writes: one-element lists, 100 deep.
  tessera::BytesWriter w;
  const char* list = typeid(ValueList).name();
  for (int i = 0; i < 100; ++i) {
    w.put(static_cast<uint32_t>(std::strlen(list)));
    w.write(list, std::strlen(list));
    w.put(uint64_t{1});
  }
  CHECK(error_of(std::move(w.bytes())).find("nests more than 64 levels") != std::string::npos);
}
