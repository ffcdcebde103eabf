// Microbenchmark: how a small grid's steps are best issued (docs/performance.md,
// "Dependent launches on small grids, scheduled late"). Not part of the build:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o steps_mb tests/gpu/steps_mb.cu && ./steps_mb
// A 7-point (3D) / 5-point (2D) Jacobi-like heat step, float32, padded rows
// (128 B), float4 in x, a z (y) march of CH planes (rows) a thread, blocks
// 32x8. Variants, n steps each, ms/step and fraction of the large copy:
//  graph   : n launches captured in a CUDA graph
//  pdl0    : the same, programmatic launch, wait+trigger at start
//  pdl1    : programmatic launch, wait at start, trigger at end of block
//  coop    : one cooperative launch, blocks loop over virtual blocks, grid.sync a step
//  memcpy  : n D2D copies of one field (graph) -> copy at this size
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>
namespace cg = cooperative_groups;

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e));       \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

struct G {
  int nx, ny, nz, sy, sz;  // sy: padded row (floats), sz: plane
  int ch;                  // planes (rows) a thread
  int bx, by, bz;          // virtual blocks per axis
  float c;
  __host__ __device__ int nvb() const { return bx * by * bz; }
};

__device__ __forceinline__ void wait_dep() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void trig_dep() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// one virtual block of the 3D step
__device__ __forceinline__ void body3(const G g, const float* __restrict__ in,
                                      float* __restrict__ out, int vb) {
  const int vx = vb % g.bx, r = vb / g.bx, vy = r % g.by, vz = r / g.by;
  const int i0 = 4 * (vx * 32 + int(threadIdx.x));
  const int j = 1 + vy * 8 + int(threadIdx.y);
  if (i0 >= g.nx || j >= g.ny - 1) return;
  const int kb = 1 + vz * g.ch;
  const int ke = min(kb + g.ch, g.nz - 1);
  int idx = (kb * g.ny + j) * g.sy + i0;
  float4 zm = *reinterpret_cast<const float4*>(in + idx - g.sz);
  float4 c = *reinterpret_cast<const float4*>(in + idx);
  for (int k = kb; k < ke; ++k, idx += g.sz) {
    const float4 zp = *reinterpret_cast<const float4*>(in + idx + g.sz);
    const float4 ym = *reinterpret_cast<const float4*>(in + idx - g.sy);
    const float4 yp = *reinterpret_cast<const float4*>(in + idx + g.sy);
    const float l = i0 > 0 ? in[idx - 1] : c.x;
    const float rr = i0 + 4 < g.nx ? in[idx + 4] : c.w;
    float4 o;
    o.x = c.x + g.c * (l + c.y + ym.x + yp.x + zm.x + zp.x - 6 * c.x);
    o.y = c.y + g.c * (c.x + c.z + ym.y + yp.y + zm.y + zp.y - 6 * c.y);
    o.z = c.z + g.c * (c.y + c.w + ym.z + yp.z + zm.z + zp.z - 6 * c.z);
    o.w = c.w + g.c * (c.z + rr + ym.w + yp.w + zm.w + zp.w - 6 * c.w);
    if (i0 == 0) o.x = c.x;
    if (i0 + 1 >= g.nx - 1) o.y = c.y;
    if (i0 + 2 >= g.nx - 1) o.z = c.z;
    if (i0 + 3 >= g.nx - 1) o.w = c.w;
    if (i0 + 0 == g.nx - 1) o.x = c.x;
    *reinterpret_cast<float4*>(out + idx) = o;
    zm = c;
    c = zp;
  }
}

__device__ __forceinline__ void body2(const G g, const float* __restrict__ in,
                                      float* __restrict__ out, int vb) {
  const int vx = vb % g.bx, vy = vb / g.bx;
  const int i0 = 4 * (vx * 32 + int(threadIdx.x));
  const int jb = 1 + (vy * 8 + int(threadIdx.y)) * g.ch;
  if (i0 >= g.nx || jb >= g.ny - 1) return;
  const int je = min(jb + g.ch, g.ny - 1);
  int idx = jb * g.sy + i0;
  float4 ym = *reinterpret_cast<const float4*>(in + idx - g.sy);
  float4 c = *reinterpret_cast<const float4*>(in + idx);
  for (int j = jb; j < je; ++j, idx += g.sy) {
    const float4 yp = *reinterpret_cast<const float4*>(in + idx + g.sy);
    const float l = i0 > 0 ? in[idx - 1] : c.x;
    const float rr = i0 + 4 < g.nx ? in[idx + 4] : c.w;
    float4 o;
    o.x = c.x + g.c * (l + c.y + ym.x + yp.x - 4 * c.x);
    o.y = c.y + g.c * (c.x + c.z + ym.y + yp.y - 4 * c.y);
    o.z = c.z + g.c * (c.y + c.w + ym.z + yp.z - 4 * c.z);
    o.w = c.w + g.c * (c.z + rr + ym.w + yp.w - 4 * c.w);
    if (i0 == 0) o.x = c.x;
    if (i0 + 1 >= g.nx - 1) o.y = c.y;
    if (i0 + 2 >= g.nx - 1) o.z = c.z;
    if (i0 + 3 >= g.nx - 1) o.w = c.w;
    *reinterpret_cast<float4*>(out + idx) = o;
    ym = c;
    c = yp;
  }
}

template <int D, int MODE>  // MODE 0 plain, 1 pdl early, 2 pdl late
__global__ void __launch_bounds__(256) step_k(G g, const float* in, float* out) {
  if (MODE == 1) {
    wait_dep();
    trig_dep();
  }
  if (MODE == 2) wait_dep();
  if (D == 3)
    body3(g, in, out, int(blockIdx.x));
  else
    body2(g, in, out, int(blockIdx.x));
  if (MODE == 2) trig_dep();
}

template <int D>
__global__ void __launch_bounds__(256) coop_k(G g, float* a, float* b, int n) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < n; ++s) {
    const float* in = (s & 1) ? b : a;
    float* out = (s & 1) ? a : b;
    for (int vb = int(blockIdx.x); vb < g.nvb(); vb += int(gridDim.x)) {
      if (D == 3)
        body3(g, in, out, vb);
      else
        body2(g, in, out, vb);
    }
    grid.sync();
  }
}

__global__ void copy_k(const float4* in, float4* out, long n4) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n4; i += long(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

static float time_graph(cudaStream_t s, cudaGraphExec_t ge, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaGraphLaunch(ge, s));  // warm
  CK(cudaStreamSynchronize(s));
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    best = ms < best ? ms : best;
  }
  return best;
}

int main(int argc, char** argv) {
  const int n = 400, reps = 7;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // large copy bandwidth
  double copy_gbs;
  {
    const long bytes = 1L << 30;
    float *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemsetAsync(a, 0, bytes, s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int r = 0; r < 6; ++r) {
      CK(cudaEventRecord(e0, s));
      CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r) best = ms < best ? ms : best;
    }
    copy_gbs = 2.0 * bytes / (best * 1e-3) / 1e9;
    printf("copy 1 GiB: %.0f GB/s, %d SMs\n", copy_gbs, sms);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  struct Sz {
    int d, nx, ny, nz, ch;
  };
  std::vector<Sz> sizes = {{3, 256, 64, 64, 4},   {3, 256, 64, 64, 2},  {3, 384, 96, 64, 4},
                           {3, 257, 129, 65, 4},  {3, 256, 128, 128, 4}, {3, 320, 200, 100, 4},
                           {3, 256, 256, 256, 4}, {2, 1025, 1025, 1, 2}, {2, 1025, 1025, 1, 1},
                           {2, 2049, 2049, 1, 2}, {2, 3001, 2999, 1, 2}};
  for (const Sz& z : sizes) {
    G g{};
    g.nx = z.nx;
    g.ny = z.ny;
    g.nz = z.d == 3 ? z.nz : 1;
    g.sy = (z.nx + 31) / 32 * 32;
    g.sz = g.sy * g.ny;
    g.ch = z.ch;
    g.c = 0.1f;
    g.bx = (g.sy / 4 + 31) / 32;
    if (z.d == 3) {
      g.by = (g.ny - 2 + 7) / 8;
      g.bz = (g.nz - 2 + g.ch - 1) / g.ch;
    } else {
      g.by = ((g.ny - 2 + g.ch - 1) / g.ch + 7) / 8;
      g.bz = 1;
    }
    const long vals = long(g.sz) * g.nz;
    const double pts = double(z.nx) * z.ny * (z.d == 3 ? z.nz : 1);
    const double bytes = 2.0 * pts * 4;  // effective: read + write each point
    float *a, *b;
    CK(cudaMalloc(&a, vals * 4 + 256));
    CK(cudaMalloc(&b, vals * 4 + 256));
    {
      std::vector<float> h(vals);
      for (long i = 0; i < vals; ++i) h[i] = float((i * 7919) % 1000) / 1000.f;
      CK(cudaMemcpy(a, h.data(), vals * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(b, h.data(), vals * 4, cudaMemcpyHostToDevice));
    }
    const dim3 blk(32, 8);
    const int nvb = g.nvb();
    auto capture = [&](int mode) {
      cudaGraph_t gr;
      cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < n; ++i) {
        float* in = (i & 1) ? b : a;
        float* out = (i & 1) ? a : b;
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(nvb);
        cfg.blockDim = blk;
        cfg.stream = s;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at;
        cfg.numAttrs = mode ? 1 : 0;
        if (mode == -1) {
          CK(cudaMemcpyAsync(out, in, vals * 4, cudaMemcpyDeviceToDevice, s));
        } else if (mode == -2) {
          copy_k<<<sms * 4, 256, 0, s>>>(reinterpret_cast<const float4*>(in),
                                          reinterpret_cast<float4*>(out), vals / 4);
        } else if (z.d == 3) {
          if (mode == 0) CK(cudaLaunchKernelEx(&cfg, step_k<3, 0>, g, (const float*)in, out));
          if (mode == 1) CK(cudaLaunchKernelEx(&cfg, step_k<3, 1>, g, (const float*)in, out));
          if (mode == 2) CK(cudaLaunchKernelEx(&cfg, step_k<3, 2>, g, (const float*)in, out));
        } else {
          if (mode == 0) CK(cudaLaunchKernelEx(&cfg, step_k<2, 0>, g, (const float*)in, out));
          if (mode == 1) CK(cudaLaunchKernelEx(&cfg, step_k<2, 1>, g, (const float*)in, out));
          if (mode == 2) CK(cudaLaunchKernelEx(&cfg, step_k<2, 2>, g, (const float*)in, out));
        }
      }
      CK(cudaStreamEndCapture(s, &gr));
      CK(cudaGraphInstantiate(&ge, gr, 0));
      CK(cudaGraphDestroy(gr));
      const float ms = time_graph(s, ge, reps);
      CK(cudaGraphExecDestroy(ge));
      return ms / n;
    };
    const float t_graph = capture(0), t_pdl0 = capture(1), t_pdl1 = capture(2);
    const float t_mcpy = capture(-1), t_kcpy = capture(-2);
    // cooperative
    int per_sm = 0;
    if (z.d == 3)
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_k<3>, 256, 0));
    else
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_k<2>, 256, 0));
    float t_coop[3] = {0, 0, 0};
    const int caps[3] = {per_sm * sms, sms * 2, sms};
    for (int v = 0; v < 3; ++v) {
      int nb = nvb < caps[v] ? nvb : caps[v];
      void* args[] = {&g, &a, &b, const_cast<int*>(&n)};
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      float best = 1e30f;
      for (int r = 0; r < reps + 1; ++r) {
        CK(cudaEventRecord(e0, s));
        if (z.d == 3)
          CK(cudaLaunchCooperativeKernel((void*)coop_k<3>, dim3(nb), blk, args, 0, s));
        else
          CK(cudaLaunchCooperativeKernel((void*)coop_k<2>, dim3(nb), blk, args, 0, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r) best = ms < best ? ms : best;
      }
      t_coop[v] = best / n;
    }
    // check: coop and graph give the same field after n steps (n even: in a)
    auto frac = [&](float ms) { return bytes / (ms * 1e-3) / 1e9 / copy_gbs; };
    char name[64];
    if (z.d == 3)
      snprintf(name, sizeof name, "%dx%dx%d ch%d", z.nx, z.ny, z.nz, z.ch);
    else
      snprintf(name, sizeof name, "%dx%d ch%d", z.nx, z.ny, z.ch);
    printf("%-20s %5.1f MiB vb %6d occ %d/SM | us/step graph %.2f (%.2f) pdl-early %.2f (%.2f) "
           "pdl-late %.2f (%.2f) coop-full %.2f (%.2f) coop-2/SM %.2f (%.2f) coop-1/SM %.2f (%.2f) "
           "| memcpy %.2f (%.2f) copykernel %.2f (%.2f)\n",
           name, vals * 4.0 / (1 << 20), nvb, per_sm, t_graph * 1e3, frac(t_graph), t_pdl0 * 1e3,
           frac(t_pdl0), t_pdl1 * 1e3, frac(t_pdl1), t_coop[0] * 1e3, frac(t_coop[0]),
           t_coop[1] * 1e3, frac(t_coop[1]), t_coop[2] * 1e3, frac(t_coop[2]), t_mcpy * 1e3,
           frac(t_mcpy), t_kcpy * 1e3, frac(t_kcpy));
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  return 0;
}
