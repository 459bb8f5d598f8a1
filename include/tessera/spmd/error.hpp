// tessera/spmd/error.hpp — what a broadcast to several engines can raise.
//
// When engines fail, the caller sees one CompositeError, as with ipyparallel: its
// message names the method and lists each engine's error as
// `[engine:method] Type: message` (the first four, then `... K more exceptions ...`),
// and each engine's exception stays reachable through `errors()` and
// `raise_exception(i)`. A result that is not ready in time raises TimeoutError;
// a name that an engine's namespace lacks raises NameError on that engine; a
// barrier that cannot complete (an engine failed or returned without reaching it)
// raises BarrierError on the engines waiting at it.
//
// @code
//   try { view.apply(work).get(); }
//   catch (const tessera::spmd::CompositeError& e) {
//     for (const auto& r : e.errors()) std::cerr << r.str() << "\n";
//     e.raise_exception(0);                       // rethrows engine 0's original
//   }
// @endcode
#pragma once

#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "tessera/graph/error.hpp"

namespace tessera::spmd {

//! A result was not ready within the time asked for.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

//! An engine's namespace has no value of the name asked for (a Reference, a pull).
class NameError : public Error {
 public:
  using Error::Error;
};

//! A barrier or collective of one apply cannot complete.
class BarrierError : public Error {
 public:
  using Error::Error;
};

//! An exception raised by an engine in another process (an MPI rank) whose C++
//! type does not cross processes: type() names the original, what() is its message.
//! (tessera's own NameError, BarrierError, TypeError, TimeoutError and Error cross as themselves.)
class RemoteException : public Error {
 public:
  //! An exception of C++ type `type` (its name) with `message`.
  RemoteException(std::string type, const std::string& message) : Error(message), type_(std::move(type)) {}
  //! The original exception's type name.
  const std::string& type() const { return type_; }

 private:
  std::string type_;
};

//! One engine's failure: where it happened and the original exception.
struct RemoteError {
  //! The engine that failed.
  int engine_id = 0;
  std::string method;       //!< "apply", "execute", "push", "pull", "scatter", "gather"
  std::string type;         //!< the exception's demangled type, e.g. "std::runtime_error"
  std::string message;      //!< its what()
  std::exception_ptr error; //!< the original exception

  //! `[engine_id:method] type: message`, as ipyparallel prints a remote error.
  std::string str() const;
};

//! The errors of one request to several engines, in engine order.
class CompositeError : public Error {
 public:
  //! How many errors the message lists before `... K more exceptions ...`.
  static constexpr size_t tb_limit = 4;

  //! `method` names the request; `errors` must not be empty. A RemoteError whose
  //! exception is itself a CompositeError is replaced by the errors it holds.
  CompositeError(std::string method, std::vector<RemoteError> errors);

  //! The request that failed.
  const std::string& method() const { return method_; }
  //! Every engine's error, in engine order.
  const std::vector<RemoteError>& errors() const { return errors_; }
  //! Rethrows the original exception of `errors()[i]`; throws Error when there is no such index.
  [[noreturn]] void raise_exception(size_t i = 0) const;

 private:
  CompositeError(std::string method, std::vector<RemoteError> flat_errors, int);
  std::string method_;
  std::vector<RemoteError> errors_;
};

//! Describes the exception `e` raised on `engine_id` during `method`.
RemoteError make_remote_error(int engine_id, std::string method, std::exception_ptr e);

}  // namespace tessera::spmd
