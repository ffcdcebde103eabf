// The ray marcher's executor: render_pixel (raymarch_ops.hpp) at every pixel,
// on the CPU (raymarch_cpu.cpp: rows handed out dynamically, rays differ in
// length) and on the GPU (raymarch_cuda.cu: one thread a pixel). The volume
// and the image stay in the backend's memory: a running field is drawn
// where it lives, and only the image comes back (Backend::download_image).
// Over MPI ranks rank 0 draws from the whole field on its own backend
// (Backend::rank_backend), so there is no wrapper over ranks.
#pragma once
#include <functional>
#include <memory>

#include "kernels/backend.hpp"
#include "kernels/raymarch/raymarch_ops.hpp"

namespace gf {

template <class T>
class RaymarchExec {
 public:
  virtual ~RaymarchExec() = default;
  // Renders the volume (a 3D field, where the backend keeps it) into img
  // (Backend::make_image(a.width, a.height)). `stop` (may be empty) is asked
  // between rows on the CPU: when it says true the rows left are not drawn
  // (a raymarch run that Ctrl-C ends writes no image); the GPU draws a frame
  // in one launch.
  virtual void render(const RayArgs<T>& a, const Field<T>& volume, Field<float>& img,
                      const std::function<bool()>& stop) = 0;
};

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_exec(Backend<T>& be);

template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cpu(Backend<T>& be);
template <class T>
std::unique_ptr<RaymarchExec<T>> make_raymarch_cuda(Backend<T>& be);

}  // namespace gf
