#include "array/io/py_literal.hpp"

#include <cctype>

#include <absl/strings/str_cat.h>

namespace tessera::array::detail {
namespace {

constexpr int kMaxDepth = 16;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  PyLiteral parse_all() {
    PyLiteral v = value(0);
    skip_space();
    if (pos_ != text_.size()) fail("expected the end of the literal");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string found = pos_ < text_.size() ? absl::StrCat("'", std::string(1, text_[pos_]), "'") : "the end";
    throw LiteralError(absl::StrCat(what, " at character ", pos_, ", found ", found));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool accept_word(std::string_view w) {
    skip_space();
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  PyLiteral value(int depth) {
    if (depth > kMaxDepth) fail("expected a literal nested at most 16 deep");
    skip_space();
    if (pos_ >= text_.size()) fail("expected a value");
    PyLiteral v;
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      v.kind = PyLiteral::Kind::Str;
      v.str = string();
    } else if (c == '(' || c == '[') {
      ++pos_;
      v.kind = c == '(' ? PyLiteral::Kind::Tuple : PyLiteral::Kind::List;
      sequence(c == '(' ? ')' : ']', [&] { v.items.push_back(value(depth + 1)); });
    } else if (c == '{') {
      ++pos_;
      v.kind = PyLiteral::Kind::Dict;
      sequence('}', [&] {
        skip_space();
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a string key");
        std::string key = string();
        if (!accept(':')) fail("expected ':' after a key");
        v.entries.push_back({std::move(key), value(depth + 1)});
      });
    } else if (accept_word("True")) {
      v.kind = PyLiteral::Kind::Bool;
      v.boolean = true;
    } else if (accept_word("False")) {
      v.kind = PyLiteral::Kind::Bool;
    } else if (accept_word("None")) {
      v.kind = PyLiteral::Kind::None;
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = PyLiteral::Kind::Int;
      v.integer = integer();
    } else {
      fail("expected a string, number, tuple, list, dict, True, False or None");
    }
    return v;
  }

  // Items separated by commas, an optional trailing comma, then `close`.
  template <class F>
  void sequence(char close, F item) {
    if (accept(close)) return;
    while (true) {
      item();
      if (accept(close)) return;
      if (!accept(',')) fail(absl::StrCat("expected ',' or '", std::string(1, close), "'"));
      if (accept(close)) return;
    }
  }

  std::string string() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') fail("expected a string without escapes");
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail("expected the closing quote of a string");
    ++pos_;
    return out;
  }

  int64_t integer() {
    bool negative = accept('-');
    skip_space();
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) fail("expected digits");
    int64_t n = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int d = text_[pos_++] - '0';
      if (n > (INT64_MAX - d) / 10) fail("expected an integer that fits in 64 bits");
      n = n * 10 + d;
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 wrote longs as 3L
    return negative ? -n : n;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const PyLiteral* PyLiteral::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string PyLiteral::kind_name() const {
  static const char* const names[] = {"a string", "an integer", "a bool", "None", "a tuple", "a list", "a dict"};
  return names[static_cast<int>(kind)];
}

PyLiteral parse_py_literal(std::string_view text) { return Parser(text).parse_all(); }

}  // namespace tessera::array::detail
