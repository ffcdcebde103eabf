// The 2D temporally blocked passes (time_block2d_kernels.cuh), compiled here
// once for every operator, beside cuda_backend.cu.
#include "kernels/cuda/time_block2d_kernels.cuh"

namespace gf {

template void launch_time_block2d<TbHeat<float, true, 2>>(const TbHeat<float, true, 2>&, int,
                                                          const float*, float*, cudaStream_t);
template void launch_time_block2d<TbHeat<float, false, 2>>(const TbHeat<float, false, 2>&, int,
                                                           const float*, float*, cudaStream_t);
template void launch_time_block2d<TbStar<float, 2>>(const TbStar<float, 2>&, int, const float*,
                                                    float*, cudaStream_t);
template void launch_time_block2d<TbJacobi<float, 2>>(const TbJacobi<float, 2>&, int, const float*,
                                                      float*, cudaStream_t);
template void launch_time_block2d<TbHeat<double, true, 2>>(const TbHeat<double, true, 2>&, int,
                                                           const double*, double*, cudaStream_t);
template void launch_time_block2d<TbHeat<double, false, 2>>(const TbHeat<double, false, 2>&, int,
                                                            const double*, double*, cudaStream_t);
template void launch_time_block2d<TbStar<double, 2>>(const TbStar<double, 2>&, int, const double*,
                                                     double*, cudaStream_t);
template void launch_time_block2d<TbJacobi<double, 2>>(const TbJacobi<double, 2>&, int,
                                                       const double*, double*, cudaStream_t);

}  // namespace gf
