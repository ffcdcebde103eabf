// NCCL for the halo exchange between the GPUs of a node (grid/halo.hpp,
// GRIDFORGE_HALO=nccl), loaded at run time (dlopen "libnccl.so.2"): the
// build does not link it and the bundle does not carry it (200 MB); the
// GPU machine's copy (CUDA's, or PyTorch's nvidia-nccl wheel) is found on
// LD_LIBRARY_PATH. Only the few calls used are declared, by nccl.h's types.
#pragma once
#include <dlfcn.h>
#include <nccl.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace gf {

class NcclApi {
 public:
  // Loads the library once; why() is "" when it is usable.
  static NcclApi& get() {
    static NcclApi api;
    return api;
  }
  const std::string& why() const { return why_; }

  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;

  void check(ncclResult_t r, const char* what) const {
    if (r != ncclSuccess)
      throw DeviceError(std::string("NCCL error in ") + what + ": " +
                        (error_string ? error_string(r) : "?"));
  }

 private:
  NcclApi() {
    // NVLink multicast stays off (shared hosts: see the GPU notes).
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      why_ = std::string("libnccl.so.2 not found (") + (e ? e : "?") + ")";
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      ok = ok && fn;
    };
    sym(get_unique_id, "ncclGetUniqueId");
    sym(comm_init_rank, "ncclCommInitRank");
    sym(comm_destroy, "ncclCommDestroy");
    sym(send, "ncclSend");
    sym(recv, "ncclRecv");
    sym(group_start, "ncclGroupStart");
    sym(group_end, "ncclGroupEnd");
    sym(error_string, "ncclGetErrorString");
    if (!ok) why_ = "libnccl.so.2 lacks ncclSend/ncclRecv (NCCL 2.7 or later is needed)";
  }
  std::string why_;
};

}  // namespace gf
