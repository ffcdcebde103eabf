// Checkpoints over MPI ranks (gather.hpp).
#include "grid/gather.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#if defined(GRIDFORGE_HAVE_MPI)
#include <mpi.h>
#endif

namespace gf {

namespace {

// Copies box [lo, lo + cnt) between an array of dims n and a packed buffer.
[[maybe_unused]] void copy_block(unsigned char* arr, const std::array<std::int64_t, 3>& n,
                const std::array<std::int64_t, 3>& lo, const std::array<std::int64_t, 3>& cnt,
                unsigned char* buf, std::size_t elem, bool to_buf) {
  const std::size_t row = std::size_t(cnt[0]) * elem;
  const Layout l = Layout::dense(n.data()), packed = Layout::dense(cnt.data());
  for (std::int64_t k = 0; k < cnt[2]; ++k)
    for (std::int64_t j = 0; j < cnt[1]; ++j) {
      unsigned char* a = arr + std::size_t(l.index(lo[0], lo[1] + j, lo[2] + k)) * elem;
      unsigned char* b = buf + std::size_t(packed.index(0, j, k)) * elem;
      if (to_buf)
        std::memcpy(b, a, row);
      else
        std::memcpy(a, b, row);
    }
}

}  // namespace

std::vector<unsigned char> gather_global(const Decomp& d, const std::vector<unsigned char>& local,
                                         std::size_t elem) {
  if (d.nranks == 1) return local;
#if defined(GRIDFORGE_HAVE_MPI)
  const Grid lg = d.local_grid();
  const auto cnt = d.count_of(d.rank);
  std::vector<unsigned char> mine(std::size_t(cnt[0] * cnt[1] * cnt[2]) * elem);
  copy_block(const_cast<unsigned char*>(local.data()), lg.n, lg.halo_lo, cnt, mine.data(), elem,
             true);
  // Byte counts and offsets of 64 bits: a block, and the whole field, may
  // pass 2 GiB (a 1024³ float32 field is 4 GiB), more than MPI_Gatherv's int
  // counts hold; so the blocks travel to rank 0 in messages of at most 1 GiB.
  std::vector<std::size_t> counts(std::size_t(d.nranks)), displs(std::size_t(d.nranks));
  std::size_t at = 0;
  for (int r = 0; r < d.nranks; ++r) {
    const auto c = d.count_of(r);
    counts[std::size_t(r)] = elem * std::size_t(c[0] * c[1] * c[2]);
    displs[std::size_t(r)] = at;
    at += counts[std::size_t(r)];
  }
  constexpr std::size_t kPiece = std::size_t(1) << 30;
  constexpr int kTag = 77;
  if (d.rank != 0) {
    for (std::size_t off = 0; off < mine.size(); off += kPiece)
      MPI_Send(mine.data() + off, int(std::min(kPiece, mine.size() - off)), MPI_BYTE, 0, kTag,
               MPI_COMM_WORLD);
    return {};
  }
  std::vector<unsigned char> packed(at);
  std::memcpy(packed.data(), mine.data(), mine.size());
  for (int r = 1; r < d.nranks; ++r)
    for (std::size_t off = 0; off < counts[std::size_t(r)]; off += kPiece)
      MPI_Recv(packed.data() + displs[std::size_t(r)] + off,
               int(std::min(kPiece, counts[std::size_t(r)] - off)), MPI_BYTE, r, kTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<unsigned char> global(std::size_t(d.global.size()) * elem);
  for (int r = 0; r < d.nranks; ++r)
    copy_block(global.data(), d.global.n, d.start_of(r), d.count_of(r), packed.data() + displs[r],
               elem, false);
  return global;
#else
  (void)local, (void)elem;
  throw std::logic_error("several ranks in a build without MPI");
#endif
}

std::vector<unsigned char> local_block(const Decomp& d, const std::vector<unsigned char>& global,
                                       std::size_t elem) {
  if (d.nranks == 1) return global;
  const Grid lg = d.local_grid();
  const Grid& gg = d.global;
  std::vector<unsigned char> out(std::size_t(lg.size()) * elem);
  auto wrap = [&](int a, std::int64_t i) {
    return ((i + lg.offset[a]) % gg.n[a] + gg.n[a]) % gg.n[a];
  };
  for (std::int64_t k = 0; k < lg.n[2]; ++k)
    for (std::int64_t j = 0; j < lg.n[1]; ++j)
      for (std::int64_t i = 0; i < lg.n[0]; ++i)
        std::memcpy(out.data() + std::size_t(lg.index(i, j, k)) * elem,
                    global.data() + std::size_t(gg.index(wrap(0, i), wrap(1, j), wrap(2, k))) * elem,
                    elem);
  return out;
}

std::vector<unsigned char> scatter_global(const Decomp& d, const std::vector<unsigned char>& global,
                                          std::size_t elem) {
  if (d.nranks == 1) return global;
#if defined(GRIDFORGE_HAVE_MPI)
  constexpr std::size_t kPiece = std::size_t(1) << 30;  // as gather_global
  constexpr int kTag = 78;
  if (d.rank != 0) {
    std::vector<unsigned char> mine(std::size_t(d.local_grid().size()) * elem);
    for (std::size_t off = 0; off < mine.size(); off += kPiece)
      MPI_Recv(mine.data() + off, int(std::min(kPiece, mine.size() - off)), MPI_BYTE, 0, kTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return mine;
  }
  for (int r = 1; r < d.nranks; ++r) {
    Decomp dr = d;
    dr.rank = r;
    dr.coords = d.coords_of(r);
    const std::vector<unsigned char> block = local_block(dr, global, elem);
    for (std::size_t off = 0; off < block.size(); off += kPiece)
      MPI_Send(block.data() + off, int(std::min(kPiece, block.size() - off)), MPI_BYTE, r, kTag,
               MPI_COMM_WORLD);
  }
  return local_block(d, global, elem);
#else
  (void)elem;
  throw std::logic_error("several ranks in a build without MPI");
#endif
}

}  // namespace gf
