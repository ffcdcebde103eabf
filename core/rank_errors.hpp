// Errors that one MPI rank finds alone: a value of its own block of the grid
// that is not finite (an initial or boundary expression, a Dirichlet face
// only it holds), a file only it cannot read. Thrown there as on one rank,
// such an error would leave the other ranks waiting for this one in their
// next collective call (a halo exchange, a reduction) for ever. So where a
// rank may fail alone, and before its next collective call, every rank runs
// that part through on_every_rank: one small all-reduce then tells every rank
// whether any failed, and all of them stop alike (RankError), with the exit
// code of the failure, as the ranks agree on an interrupt (stop_requested).
// On one rank (no mpirun) nothing changes: the error goes on as it is.
#pragma once
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "core/mpi.hpp"

namespace gf {

// The error of the lowest rank that failed, thrown on every rank at the same
// point of the run: here() on that rank, whose message it is to print; the
// others stop quietly. exit_code() is the failure's (SPEC §2).
class RankError : public Error {
 public:
  RankError(std::string message, int code, int rank, bool here, bool located)
      : Error(std::move(message)), code_(code), rank_(rank), here_(here), located_(located) {}
  int exit_code() const override { return code_; }
  int rank() const { return rank_; }
  bool here() const { return here_; }
  // The message starts with the case file's place (a CaseError's "file:line:col: key: ...").
  bool located() const { return located_; }

 private:
  int code_, rank_;
  bool here_, located_;
};

// Every rank calls it at the same point, `failure` its own error (null when
// none): returns when no rank failed, else throws the RankError of the lowest
// rank that did on every rank. On one rank it rethrows `failure` as it is. A
// RankError goes on as it is too: every rank holds it already.
void agree_on_errors(const std::exception_ptr& failure);

// Whether `be` (a Backend) holds one rank's block of a grid split over ranks
// (the distributed backend), so that every rank runs what is done with it
// together; not so where rank 0 works on the whole grid alone (raymarch).
template <class B>
bool shared_by_ranks(B& be) {
  return &be.rank_backend() != &be;
}

// f() on this rank, then, when `together` (every rank calls it at the same
// point of the run) and there are several ranks, agree_on_errors: f's value
// when no rank failed. Not together: f() alone, as on one rank.
template <class F>
auto on_every_rank(bool together, F&& f) -> decltype(f()) {
  using R = decltype(f());
  if (!together || mpi::size() == 1) return f();
  std::exception_ptr failure;
  if constexpr (std::is_void_v<R>) {
    try {
      f();
    } catch (...) {
      failure = std::current_exception();
    }
    agree_on_errors(failure);
  } else {
    std::optional<R> value;
    try {
      value.emplace(f());
    } catch (...) {
      failure = std::current_exception();
    }
    agree_on_errors(failure);
    return std::move(*value);
  }
}

}  // namespace gf
