// Output overlap and CUDA graphs on the GPU: a snapshot is the field as it
// stood when taken, even while later steps run; chunks of steps replayed as
// CUDA graphs give the plain launches' results bit for bit; a whole run
// writes the same files with the background writer as in turn. Run with
// `gridforge_tests "[gpu][overlap]"`.
#include <fmt/core.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../unit/case_test_util.hpp"
#include "core/error.hpp"
#include "io/checkpoint.hpp"
#include "io/output.hpp"
#include "kernels/backend.hpp"
#include "tests/unit/random_field.hpp"
#include "kernels/device.hpp"
#include "kernels/heat/heat_exec.hpp"
#include "kernels/laplace/laplace_exec.hpp"
#include "kernels/stencil/stencil_exec.hpp"
#include "solvers/run.hpp"

using namespace gf;
namespace fs = std::filesystem;

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
HeatArgs<T> heat_args(const Grid& g, std::mt19937_64& rng, BcType bc) {
  std::uniform_real_distribution<double> d(0.02, 0.12);  // stable: Σc ≤ 0.36
  HeatArgs<T> a;
  a.ndim = g.ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.c[ax] = ax < g.ndim ? static_cast<T>(d(rng)) : T(0);
    a.bc[ax].lo = a.bc[ax].hi = bc;
    a.bc[ax].ghost_lo = static_cast<T>(d(rng));
    a.bc[ax].ghost_hi = static_cast<T>(-d(rng));
  }
  a.dt = static_cast<T>(1e-3);
  a.source_const = static_cast<T>(d(rng));
  return a;
}

// Snapshots of a field taken between steps, waited for on another thread
// (as the writer does) after more steps were queued: each is the field as it
// was at its take(), against a plain download at that point of a second,
// identical run.
template <class T>
void check_snapshots(std::vector<std::int64_t> n, int slots) {
  Grid g;
  g.ndim = int(n.size());
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = ax < g.ndim ? n[std::size_t(ax)] : 1;
  const std::size_t np = std::size_t(g.size());
  std::mt19937_64 rng(77 + np + slots);
  const HeatArgs<T> a = heat_args<T>(g, rng, BcType::Neumann);
  const auto u0 = test::random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  auto gpu = make_cuda_backend<T>(0);
  auto exec = make_heat_exec(*gpu);
  // The reference: downloads after 0, 3, 6, ... steps.
  std::vector<std::vector<T>> want;
  {
    Field<T> u = gpu->make_field(g, "u"), v = gpu->make_field(g, "v");
    gpu->upload(u0.data(), u);
    gpu->upload(poison.data(), v);
    for (int k = 0; k < 6; ++k) {
      want.emplace_back(np);
      gpu->download(u, want.back().data());
      for (int s = 0; s < 3; ++s) {
        exec->step(a, u, v);
        u.swap(v);
      }
    }
  }
  std::string why;
  auto snaps = gpu->make_snapshots(g, slots, &why);
  INFO(why);
  REQUIRE(snaps);
  REQUIRE(snaps->slots() == slots);
  Field<T> u = gpu->make_field(g, "u"), v = gpu->make_field(g, "v");
  gpu->upload(u0.data(), u);
  gpu->upload(poison.data(), v);
  std::vector<std::vector<T>> got;
  for (int k = 0; k < 6; ++k) {
    const int s = k % slots;
    if (k >= slots) {  // the slot's previous copy: waited for on another thread
      std::thread t([&] { snaps->wait(s); });
      t.join();
      got.emplace_back(snaps->host(s), snaps->host(s) + np);
    }
    snaps->take(u, s);
    for (int st = 0; st < 3; ++st) {  // queued right behind the copy, no host wait
      exec->step(a, u, v);
      u.swap(v);
    }
  }
  for (int k = 6; k < 6 + slots; ++k) {
    const int s = k % slots;
    std::thread t([&] { snaps->wait(s); });
    t.join();
    got.emplace_back(snaps->host(s), snaps->host(s) + np);
  }
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    INFO("snapshot " << k << ", float" << 8 * sizeof(T) << ", " << slots << " slot(s)");
    CHECK(same_bits(got[k], want[k]));
  }
}

// A sequence of HeatExec::run calls (chunk lengths even and odd, each
// repeated so that it is launched plainly, then recorded, then replayed; a
// change of arguments between them) against the same steps as single
// HeatExec::step calls.
template <class T>
void check_heat_graphs(std::vector<std::int64_t> n, BcType bc, bool source_field) {
  Grid g;
  g.ndim = int(n.size());
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = ax < g.ndim ? n[std::size_t(ax)] : 1;
  const std::size_t np = std::size_t(g.size());
  std::mt19937_64 rng(11 + np + int(bc) + source_field);
  const HeatArgs<T> a0 = heat_args<T>(g, rng, bc);
  HeatArgs<T> b0 = a0;  // another dt, as the short last step of a t_end run
  b0.dt = static_cast<T>(0.4e-3);
  for (int ax = 0; ax < g.ndim; ++ax) b0.c[ax] = static_cast<T>(double(a0.c[ax]) * 0.4);
  const auto u0 = test::random_field<T>(np, rng);
  const auto s0 = test::random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  auto gpu = make_cuda_backend<T>(0);
  auto exec = make_heat_exec(*gpu);
  if (gpu->steps_per_call(g) <= 1) WARN("no CUDA graphs here (GRIDFORGE_CUDA_GRAPHS=0?)");
  struct Call {
    bool other;
    int n;
  };
  const std::vector<Call> calls = {{false, 10}, {false, 10}, {false, 10}, {false, 10}, {false, 7},
                                   {false, 7},  {false, 7},  {false, 7},  {true, 6},   {true, 6},
                                   {true, 6},   {false, 10}, {false, 2},  {false, 2},  {false, 2},
                                   {false, 64}, {false, 64}, {false, 64}, {true, 1},   {false, 3}};
  auto run = [&](bool graphs) {
    Field<T> u = gpu->make_field(g, "u"), v = gpu->make_field(g, "v"), s = gpu->make_field(g, "s");
    gpu->upload(u0.data(), u);
    gpu->upload(poison.data(), v);
    gpu->upload(s0.data(), s);
    HeatArgs<T> a = a0, b = b0;
    if (source_field) a.source = b.source = s.data();
    for (const Call& c : calls) {
      const HeatArgs<T>& args = c.other ? b : a;
      if (graphs) {
        exec->run(args, c.n, u, v);
      } else {
        for (int k = 0; k < c.n; ++k) {
          exec->step(args, u, v);
          u.swap(v);
        }
      }
    }
    std::vector<T> out(np);
    gpu->download(u, out.data());
    return out;
  };
  const auto plain = run(false);
  const auto replayed = run(true);
  std::size_t nan = 0;
  for (T x : replayed) nan += std::isnan(double(x));
  INFO("heat " << g.shape_str() << " bc " << int(bc) << " source " << source_field << " float"
               << 8 * sizeof(T));
  CHECK(nan == 0);
  CHECK(same_bits(plain, replayed));
}

template <class T>
void check_stencil_graphs(std::vector<std::int64_t> n, int radius) {
  Grid g;
  g.ndim = int(n.size());
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = ax < g.ndim ? n[std::size_t(ax)] : 1;
  const std::size_t np = std::size_t(g.size());
  std::mt19937_64 rng(5 + np + radius);
  std::uniform_real_distribution<double> d(-1, 1);
  StencilArgs<T> a;
  a.ndim = g.ndim;
  for (int ax = 0; ax < 3; ++ax) {
    a.bc[ax] = AxisBc<T>{BcType::Neumann, BcType::Dirichlet, static_cast<T>(0.1 * d(rng)),
                         static_cast<T>(0.1 * d(rng))};
  }
  std::vector<StencilTap<T>> taps;  // the centre and ±radius on each axis
  for (int ax = -1; ax < g.ndim; ++ax)
    for (int sgn : {-1, 1}) {
      if (ax < 0 && sgn > 0) continue;
      StencilTap<T> t{};
      if (ax >= 0) t.d[ax] = sgn * radius;
      t.w = static_cast<T>(ax < 0 ? -0.5 : 0.5 / (2 * g.ndim));
      taps.push_back(t);
    }
  a.ntaps = int(taps.size());
  a.radius = radius;
  a.update = true;
  a.coeff = static_cast<T>(0.3);
  const auto u0 = test::random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  auto gpu = make_cuda_backend<T>(0);
  auto exec = make_stencil_exec(*gpu);
  auto run = [&](bool graphs) {
    Field<T> u = gpu->make_field(g, "u"), v = gpu->make_field(g, "v");
    gpu->upload(u0.data(), u);
    gpu->upload(poison.data(), v);
    exec->set_taps(taps);
    for (int n_steps : {8, 8, 8, 5, 5, 5, 5, 64, 64}) {
      if (graphs) {
        exec->run(a, n_steps, u, v);
      } else {
        for (int k = 0; k < n_steps; ++k) {
          exec->step(a, u, v);
          u.swap(v);
        }
      }
    }
    std::vector<T> out(np);
    gpu->download(u, out.data());
    return out;
  };
  const auto plain = run(false);
  const auto replayed = run(true);
  INFO("stencil " << g.shape_str() << " radius " << radius << " float" << 8 * sizeof(T));
  CHECK(same_bits(plain, replayed));
}

// Jacobi sweeps (ping-pong) and red-black SOR sweeps (in place) replayed as
// graphs against the single sweeps, bit for bit.
template <class T>
void check_laplace_graphs(std::vector<std::int64_t> n, BcType bc, bool sor) {
  // red-black SOR in place needs an even number of points on a periodic axis
  // (a case rule): otherwise a point and its wrapped neighbour share a colour
  // and the sweep races
  if (sor && bc == BcType::Periodic)
    for (auto& m : n) m += m % 2;
  Grid g;
  g.ndim = int(n.size());
  for (int ax = 0; ax < 3; ++ax) g.n[ax] = ax < g.ndim ? n[std::size_t(ax)] : 1;
  const std::size_t np = std::size_t(g.size());
  std::mt19937_64 rng(31 + np + int(bc) + sor);
  std::uniform_real_distribution<double> d(0.5, 2.0);
  LaplaceArgs<T> a;
  a.ndim = g.ndim;
  double diag = 0;
  for (int ax = 0; ax < 3; ++ax) {
    const double ih2 = ax < g.ndim ? d(rng) : 0.0;
    a.ih2[ax] = static_cast<T>(ih2);
    diag += 2 * ih2;
    a.bc[ax] = AxisBc<T>{bc, bc, static_cast<T>(0.1 * d(rng)), static_cast<T>(-0.1 * d(rng))};
  }
  a.diag = static_cast<T>(diag);
  a.inv_diag = static_cast<T>(1.0 / diag);
  a.omega = static_cast<T>(1.6);
  a.f_const = static_cast<T>(0.3);
  const auto u0 = test::random_field<T>(np, rng);
  const auto f0 = test::random_field<T>(np, rng);
  const std::vector<T> poison(np, std::numeric_limits<T>::quiet_NaN());
  auto gpu = make_cuda_backend<T>(0);
  auto exec = make_laplace_exec(*gpu);
  auto run = [&](bool graphs) {
    Field<T> u = gpu->make_field(g, "u"), v = gpu->make_field(g, "v"), f = gpu->make_field(g, "f");
    gpu->upload(u0.data(), u);
    gpu->upload(poison.data(), v);
    gpu->upload(f0.data(), f);
    LaplaceArgs<T> args = a;
    args.f = f.data();
    for (int n_sweeps : {6, 6, 6, 9, 9, 9, 9, 64, 64, 64, 1, 4}) {
      if (graphs) {
        if (sor)
          exec->sor_run(args, n_sweeps, u);
        else
          exec->jacobi_run(args, n_sweeps, u, v);
      } else {
        for (int k = 0; k < n_sweeps; ++k) {
          if (sor) {
            exec->sor_sweep(args, u, 0);
            exec->sor_sweep(args, u, 1);
          } else {
            exec->jacobi_sweep(args, u, v);
            u.swap(v);
          }
        }
      }
    }
    std::vector<T> out(np);
    gpu->download(u, out.data());
    return out;
  };
  const auto plain = run(false);
  const auto replayed = run(true);
  std::size_t nan = 0;
  for (T x : replayed) nan += std::isnan(double(x));
  INFO((sor ? "sor " : "jacobi ") << g.shape_str() << " bc " << int(bc) << " float"
                                  << 8 * sizeof(T));
  CHECK(nan == 0);
  CHECK(same_bits(plain, replayed));
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("GPU snapshots are the field as it stood at take(), steps queued behind them",
          "[gpu][overlap]") {
  check_snapshots<float>({70, 33, 21}, 1);
  check_snapshots<double>({70, 33, 21}, 1);
  check_snapshots<float>({64, 64, 64}, 2);
  check_snapshots<double>({301, 77}, 2);
  check_snapshots<float>({1001}, 1);
}

TEST_CASE("GPU heat steps replayed as CUDA graphs equal plain launches bit for bit",
          "[gpu][overlap]") {
  for (BcType bc : {BcType::Dirichlet, BcType::Neumann, BcType::Periodic}) {
    for (bool src : {false, true}) {
      check_heat_graphs<float>({37, 29, 23}, bc, src);
      check_heat_graphs<double>({37, 29, 23}, bc, src);
      check_heat_graphs<float>({64, 64, 64}, bc, src);  // the vectorised 3D kernel
      check_heat_graphs<double>({64, 48, 40}, bc, src);
      check_heat_graphs<float>({256, 256}, bc, src);
      check_heat_graphs<double>({67, 45}, bc, src);
      check_heat_graphs<float>({1001}, bc, src);
      check_heat_graphs<double>({1001}, bc, src);
    }
  }
}

TEST_CASE("GPU stencil steps replayed as CUDA graphs equal plain launches bit for bit",
          "[gpu][overlap]") {
  check_stencil_graphs<float>({45, 31, 27}, 1);
  check_stencil_graphs<double>({45, 31, 27}, 2);
  check_stencil_graphs<float>({130, 97}, 3);
  check_stencil_graphs<double>({500}, 4);
}

TEST_CASE("GPU Jacobi and SOR sweeps replayed as CUDA graphs equal plain launches bit for bit",
          "[gpu][overlap]") {
  for (bool sor : {false, true})
    for (BcType bc : {BcType::Dirichlet, BcType::Neumann, BcType::Periodic}) {
      check_laplace_graphs<float>({64, 64}, bc, sor);  // the vectorised 2D Jacobi
      check_laplace_graphs<double>({65, 65}, bc, sor);
      check_laplace_graphs<float>({33, 29, 27}, bc, sor);
      check_laplace_graphs<double>({40, 40, 40}, bc, sor);
      check_laplace_graphs<float>({999}, bc, sor);
    }
}

TEST_CASE("GPU runs write the same files with the background writer as in turn", "[gpu][overlap]") {
  for (const std::string prec : {"float32", "float64"}) {
    // 48³: steps replayed as graphs; a source field; outputs every 7 steps,
    // frames every 10, checkpoints every 20; a t_end whose last step is short.
    const Case c = test::load(
        "workload: heat\nprecision: " + prec +
        "\ngrid: {dims: [48, 48, 48]}\n"
        "initial: {expr: \"exp(-((x-0.4)^2+(y-0.5)^2+(z-0.6)^2)/0.05)\"}\n"
        "heat: {alpha: 0.01, t_end: 0.03, dt: 0.0007, source: \"x*y\"}\n"
        "output: {every: 7, formats: [vtk, hdf5], checkpoint_every: 20}\n"
        "render: {every: 10, camera: {position: [2, -1, 1.5], width: 64, height: 48}}\n");
    const fs::path base = fs::temp_directory_path() / ("gf_gpu_overlap_" + prec);
    fs::remove_all(base);
    nlohmann::json timing[2];
    for (int mode = 0; mode < 2; ++mode) {
      const fs::path dir = base / (mode ? "background" : "sync");
      fs::create_directories(dir);
      RunOptions opts{dir, false, "test", nullptr};
      opts.sync_output = mode == 0;
      if (prec == "float32") {
        auto be = make_cuda_backend<float>(0);
        timing[mode] = run_case<float>(c, *be, opts);
      } else {
        auto be = make_cuda_backend<double>(0);
        timing[mode] = run_case<double>(c, *be, opts);
      }
    }
    INFO(prec << ": " << timing[1].dump());
    CHECK(timing[1]["output_writer"]["background"] == true);
    const std::int64_t steps = timing[0]["steps"];
    REQUIRE(steps == c.heat.steps);
    std::vector<std::int64_t> outs;
    for (std::int64_t s = 0; s < steps; s += 7) outs.push_back(s);
    outs.push_back(steps);
    for (std::int64_t s : outs) {
      const std::string vti = fmt::format("vtk/case_{:06d}.vti", s);
      INFO(vti);
      REQUIRE(fs::exists(base / "sync" / vti));
      CHECK(slurp(base / "sync" / vti) == slurp(base / "background" / vti));
      const std::string ds = fmt::format("/steps/{:06d}/u", s);
      CHECK(io::h5_read_dataset((base / "sync/fields.h5").string(), ds) ==
            io::h5_read_dataset((base / "background/fields.h5").string(), ds));
    }
    for (const char* f : {"case.pvd", "fields.xdmf"})
      CHECK(slurp(base / "sync" / f) == slurp(base / "background" / f));
    for (std::int64_t s = 0; s < steps; s += 10) {
      const std::string png = fmt::format("frames/case_{:06d}.png", s);
      INFO(png);
      REQUIRE(fs::exists(base / "background" / png));
      CHECK(slurp(base / "sync" / png) == slurp(base / "background" / png));
    }
    const io::Checkpoint ca = io::read_checkpoint(base / "sync/checkpoint.h5");
    const io::Checkpoint cb = io::read_checkpoint(base / "background/checkpoint.h5");
    CHECK(cb.step == ca.step);
    CHECK(cb.field("u") == ca.field("u"));
    fs::remove_all(base);
  }
}
