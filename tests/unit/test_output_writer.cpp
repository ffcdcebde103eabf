// The background writer and the run's outputs through it: tasks in order,
// errors carried to the caller, snapshots of the field as it was, and runs
// that write the very same files as when everything is written in turn.
#include <fmt/core.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "case_test_util.hpp"
#include "core/background_writer.hpp"
#include "core/error.hpp"
#include "io/checkpoint.hpp"
#include "io/output.hpp"
#include "kernels/backend.hpp"
#include "solvers/output_writer.hpp"
#include "solvers/run.hpp"

using namespace gf;
namespace fs = std::filesystem;

namespace {

// A gate the test opens: a task waiting on it holds the writer's thread.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void wait() {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return open; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> lk(m);
      open = true;
    }
    cv.notify_all();
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Every file under dir (relative path → bytes), but fields.h5 and
// checkpoint.h5 (HDF5 keeps creation times: compared by their values),
// timing.json and log.csv (wall times), and run.json.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), dir).string();
    if (rel == "fields.h5" || rel == "checkpoint.h5" || rel == "timing.json" || rel == "log.csv")
      continue;
    m[rel] = slurp(e.path());
  }
  return m;
}

}  // namespace

TEST_CASE("background writer: tasks run in order, drain waits for them", "[output]") {
  std::vector<int> order;
  std::mutex m;
  {
    BackgroundWriter w(2);
    std::uint64_t last = 0;
    for (int i = 0; i < 20; ++i)
      last = w.submit([&, i] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        std::lock_guard<std::mutex> lk(m);
        order.push_back(i);
      });
    CHECK(last == 20);
    w.drain();
    std::lock_guard<std::mutex> lk(m);
    REQUIRE(order.size() == 20);
    for (int i = 0; i < 20; ++i) CHECK(order[std::size_t(i)] == i);
  }
}

TEST_CASE("background writer: at most max_waiting tasks wait behind the running one", "[output]") {
  Gate gate;
  std::atomic<int> ran{0};
  std::atomic<bool> started{false};
  BackgroundWriter w(2);
  w.submit([&] {  // runs and holds the thread
    started = true;
    gate.wait();
    ++ran;
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  w.submit([&] { ++ran; });
  w.submit([&] { ++ran; });
  std::atomic<bool> third_in{false};
  std::thread t([&] {
    w.submit([&] { ++ran; });  // blocks: two are waiting
    third_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(third_in);
  gate.release();
  t.join();
  CHECK(third_in);
  w.drain();
  CHECK(ran == 4);
  CHECK(w.waited_s() > 0.0);
}

TEST_CASE("background writer: an error stops the tasks after it and reaches the caller",
          "[output]") {
  std::atomic<int> ran{0};
  Gate gate;
  BackgroundWriter w(4);
  w.submit([&] {
    gate.wait();
    throw IoError("cannot write 'x.vti': No space left on device");
  });
  w.submit([&] { ++ran; });  // queued behind the failing one: dropped
  gate.release();
  CHECK_THROWS_WITH(w.drain(), "cannot write 'x.vti': No space left on device");
  CHECK(ran == 0);
  // And at the next output: submit throws the same error and queues nothing.
  CHECK_THROWS_AS(w.submit([&] { ++ran; }), IoError);
  CHECK_THROWS_AS(w.wait_for(1), IoError);
  w.drain_quietly();
  CHECK(ran == 0);
}

TEST_CASE("background writer: its destructor runs what is queued, then joins", "[output]") {
  std::atomic<int> ran{0};
  {
    BackgroundWriter w(8);
    for (int i = 0; i < 5; ++i)
      w.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ++ran;
      });
  }
  CHECK(ran == 5);
  // ... but not after an error (a synchronous run would have stopped there).
  ran = 0;
  {
    BackgroundWriter w(8);
    w.submit([] { throw IoError("disk full"); });
    try {
      for (int i = 0; i < 5; ++i) w.submit([&] { ++ran; });
    } catch (const IoError&) {
    }
  }
  CHECK(ran == 0);
}

TEST_CASE("output writer: the snapshot is the field as it was when taken", "[output]") {
  auto be = make_cpu_backend<double>();
  Grid g;
  g.ndim = 2;
  g.n = {13, 7, 1};
  Field<double> f = be->make_field(g, "u");
  std::vector<double> v(std::size_t(g.size()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i) * 0.5;
  be->upload(v.data(), f);
  for (bool background : {true, false}) {
    std::vector<std::vector<double>> written;
    {
      OutputWriter<double> out(*be, g, background, background ? "" : "test");
      CHECK(out.background() == background);
      Gate gate;
      if (!background) gate.release();  // the write runs here, at once
      out.field(f, [&](const double* h) {
        gate.wait();  // the writer (when there is one) gets here after the field moved on
        written.emplace_back(h, h + v.size());
      });
      // The field moves on before the writer gets to it.
      std::vector<double> w2(v.size(), -1.0);
      be->upload(w2.data(), f);
      gate.release();
      out.field(f, [&](const double* h) { written.emplace_back(h, h + v.size()); });
      out.drain();
      CHECK(out.summary()["background"] == background);
      be->upload(v.data(), f);
    }
    REQUIRE(written.size() == 2);
    CHECK(written[0] == v);
    CHECK(written[1] == std::vector<double>(v.size(), -1.0));
  }
}

TEST_CASE("output writer: a failed write is the error of the next output or of drain", "[output]") {
  auto be = make_cpu_backend<float>();
  Grid g;
  g.ndim = 1;
  g.n = {100, 1, 1};
  Field<float> f = be->make_field(g, "u");
  std::vector<float> v(100, 1.0f);
  be->upload(v.data(), f);
  int writes = 0;
  OutputWriter<float> out(*be, g, true, "");
  out.field(f,
            [&](const float*) { throw IoError("cannot write 'a.vti': No space left on device"); });
  // The next output waits for the snapshot buffer, then reports the failure.
  CHECK_THROWS_WITH(out.field(f, [&](const float*) { ++writes; }),
                    "cannot write 'a.vti': No space left on device");
  CHECK_THROWS_AS(out.drain(), IoError);
  CHECK(out.drain_quietly() == "cannot write 'a.vti': No space left on device");
  CHECK(writes == 0);
}

TEST_CASE("output writer: frames run on a thread of their own, beside a field's write",
          "[output]") {
  auto be = make_cpu_backend<float>();
  Grid g;
  g.ndim = 1;
  g.n = {64, 1, 1};
  Field<float> f = be->make_field(g, "u");
  std::vector<float> v(64, 1.0f);
  be->upload(v.data(), f);
  OutputWriter<float> out(*be, g, true, "");
  Gate gate;
  out.field(f, [&](const float*) { gate.wait(); });  // holds the fields' thread
  std::atomic<int> frames{0};
  for (int i = 0; i < 3; ++i) out.queue()([&] { ++frames; });
  // The frames are written while the field's write still waits.
  for (int t = 0; t < 500 && frames < 3; ++t)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(frames == 3);
  gate.release();
  out.drain();
  const nlohmann::json j = out.summary();
  CHECK(j["background"] == true);
  CHECK(j.contains("frames_busy_s"));
  // A frame that fails is drain's error, after the fields are written.
  bool field_written = false;
  out.task([] { throw IoError("cannot write 'frames/a.png': No space left on device"); });
  out.field(f, [&](const float*) { field_written = true; });
  CHECK_THROWS_WITH(out.drain(), "cannot write 'frames/a.png': No space left on device");
  CHECK(field_written);
  CHECK(out.drain_quietly() == "cannot write 'frames/a.png': No space left on device");
  CHECK_THROWS_AS(out.task([] {}), IoError);  // no frame runs after a failed one
}

namespace {

// A heat run with outputs every 7 steps (VTK and HDF5), in-situ frames every
// 10 and checkpoints every 20, written in turn and by the background writer.
template <class T>
void same_files_sync_and_background(const std::string& precision) {
  const std::string yaml =
      "workload: heat\nprecision: " + precision +
      "\ngrid: {dims: [14, 11, 9]}\n"
      "initial: {expr: \"exp(-((x-0.4)^2+(y-0.5)^2+(z-0.6)^2)/0.05)\"}\n"
      "heat: {alpha: 0.01, steps: 45, source: \"x*y\"}\n"
      "output: {every: 7, formats: [vtk, hdf5], checkpoint_every: 20}\n"
      "render: {every: 10, camera: {position: [2, -1, 1.5], width: 32, height: 24}, "
      "transfer: {colormap: inferno, density: 30}}\n";
  const Case c = test::load(yaml);
  const fs::path base = fs::temp_directory_path() / ("gf_test_overlap_" + precision);
  fs::remove_all(base);
  nlohmann::json timing[2];
  for (int mode = 0; mode < 2; ++mode) {
    const fs::path dir = base / (mode ? "background" : "sync");
    fs::create_directories(dir);
    auto be = make_cpu_backend<T>();
    RunOptions opts{dir, false, "test", nullptr};
    opts.sync_output = mode == 0;
    timing[mode] = run_case<T>(c, *be, opts);
  }
  CHECK(timing[0]["output_writer"]["background"] == false);
  CHECK(timing[0]["output_writer"]["why"] == "GRIDFORGE_SYNC_OUTPUT=1");
  CHECK(timing[1]["output_writer"]["background"] == true);
  const auto a = files_of(base / "sync"), b = files_of(base / "background");
  CHECK(a.size() == 15);  // 8 .vti (steps 0, 7, ..., 42, 45), the .pvd, fields.xdmf, 5 frames
  REQUIRE(a.size() == b.size());
  for (const auto& [name, bytes] : a) {
    INFO(name);
    REQUIRE(b.count(name));
    CHECK(b.at(name) == bytes);
  }
  for (int s : {0, 7, 14, 21, 28, 35, 42, 45}) {
    const std::string ds = fmt::format("/steps/{:06d}/u", s);
    INFO(ds);
    CHECK(io::h5_read_dataset((base / "sync/fields.h5").string(), ds) ==
          io::h5_read_dataset((base / "background/fields.h5").string(), ds));
  }
  const io::Checkpoint ca = io::read_checkpoint((base / "sync/checkpoint.h5").string());
  const io::Checkpoint cb = io::read_checkpoint((base / "background/checkpoint.h5").string());
  CHECK(ca.step == 45);
  CHECK(cb.step == ca.step);
  CHECK(cb.field("u") == ca.field("u"));
  fs::remove_all(base);
}

}  // namespace

TEST_CASE("a run writes the same files in turn and with the background writer", "[output]") {
  same_files_sync_and_background<double>("float64");
  same_files_sync_and_background<float>("float32");
}
