// Field<T>: one array of grid values in the memory of one backend (host or
// device). Move-only RAII; copies between host and device are explicit calls
// on the backend, never hidden here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "grid/grid.hpp"

namespace gf {

// The one allocator a backend owns. It counts bytes so that runs can report
// their peak memory (timing.json: device_memory_peak_bytes).
class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  // Throws DeviceError (device) or std::bad_alloc (host) with `what` in the message.
  virtual void* allocate(std::size_t bytes, const std::string& what) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
  virtual bool host_accessible() const = 0;
  std::size_t current_bytes() const { return current_; }
  std::size_t peak_bytes() const { return peak_; }

 protected:
  void count_alloc(std::size_t b) {
    current_ += b;
    if (current_ > peak_) peak_ = current_;
  }
  void count_free(std::size_t b) { current_ -= b; }

 private:
  std::size_t current_ = 0, peak_ = 0;
};

template <class T>
class Field {
 public:
  Field() = default;
  // A field of g's points in layout l (g's dense layout unless a backend
  // pads its rows: Backend::make_field).
  Field(const Grid& g, MemoryResource& mr, const std::string& what)
      : Field(g, g.layout(), mr, what) {}
  Field(const Grid& g, const Layout& l, MemoryResource& mr, const std::string& what)
      : grid_(g), layout_(l), mr_(&mr), n_(static_cast<std::size_t>(layout_.span())) {
    data_ = static_cast<T*>(mr.allocate(n_ * sizeof(T), what));
  }
  Field(Field&& o) noexcept { swap(o); }
  Field& operator=(Field&& o) noexcept {
    Field tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Field(const Field&) = delete;
  Field& operator=(const Field&) = delete;
  ~Field() {
    if (data_) mr_->deallocate(data_, n_ * sizeof(T));
  }

  void swap(Field& o) noexcept {
    std::swap(grid_, o.grid_);
    std::swap(layout_, o.layout_);
    std::swap(mr_, o.mr_);
    std::swap(data_, o.data_);
    std::swap(n_, o.n_);
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  // Values in memory (the layout's span: every point, and padding if any).
  std::size_t size() const { return n_; }
  // Points of the grid it holds: the values of a host copy (download).
  std::size_t points() const { return static_cast<std::size_t>(layout_.size()); }
  // Bytes of its points (not a padded row's padding): what a step moves, in
  // the effective bandwidth of timing.json and bench.
  std::size_t point_bytes() const { return points() * sizeof(T); }
  std::size_t bytes() const { return n_ * sizeof(T); }
  const Grid& grid() const { return grid_; }
  // Where each point's value lies (grid/view.hpp), and views for kernels and loops.
  const Layout& layout() const { return layout_; }
  FieldView<T> view() { return {data_, layout_}; }
  FieldView<const T> view() const { return {data_, layout_}; }
  bool host_accessible() const { return mr_ && mr_->host_accessible(); }

 private:
  Grid grid_;
  Layout layout_;
  MemoryResource* mr_ = nullptr;
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

// A field of a run's state with the name its outputs give it.
template <class T>
struct NamedField {
  std::string name;
  const Field<T>* field = nullptr;
};

}  // namespace gf
