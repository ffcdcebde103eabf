#include "core/rank_errors.hpp"

#include <new>

namespace gf {

namespace {

// What app/main.cpp would make of the error on one rank: its exit code and
// message (bad_alloc: out of host memory, exit 3; anything else: exit 1).
struct Failure {
  int code = kExitRunFailed;
  bool located = false;
  std::string message;
};

Failure describe(const std::exception_ptr& failure) {
  Failure f;
  try {
    std::rethrow_exception(failure);
  } catch (const CaseError& e) {
    f = {e.exit_code(), true, e.what()};
  } catch (const Error& e) {
    f = {e.exit_code(), false, e.what()};
  } catch (const std::bad_alloc&) {
    f = {kExitDevice, false, "out of host memory; use a smaller grid or float32"};
  } catch (const std::exception& e) {
    f.message = e.what();
  } catch (...) {
    f.message = "unknown error";
  }
  return f;
}

}  // namespace

void agree_on_errors(const std::exception_ptr& failure) {
  if (mpi::size() == 1) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
  if (failure) try {
      std::rethrow_exception(failure);
    } catch (const RankError&) {
      throw;  // agreed already, by every rank
    } catch (...) {
    }
  const int first = mpi::first_rank(bool(failure));
  if (first >= mpi::size()) return;
  // The failing rank's code, whether its message is located, and the message:
  // one string from it ("2 1 cases/heat.yaml:3:5: ...").
  std::string said;
  if (mpi::rank() == first) {
    const Failure f = describe(failure);
    said = std::to_string(f.code) + (f.located ? " 1 " : " 0 ") + f.message;
  }
  said = mpi::broadcast_from(first, said);
  const std::size_t a = said.find(' ');
  const int code = std::stoi(said.substr(0, a));
  const bool located = said.compare(a + 1, 1, "1") == 0;
  throw RankError(said.substr(a + 3), code, first, mpi::rank() == first, located);
}

}  // namespace gf
