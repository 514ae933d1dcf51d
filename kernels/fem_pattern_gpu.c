/* tw_fem_pattern_gpu (fem_pattern_gpu.h): the FEM pattern built by Thrust's sort /
 * unique / scan (tw_thrust.h) and copied into the host arrays tw_fem keeps,
 * since the CPU still fills K and the CUDA world uploads what tw_fem holds.
 * Plain C calling the extern "C" entry points: no nvcc needed here.
 *
 * NEVER RUN ON A GPU YET: the algorithm is checked against host/fem.c on
 * Thrust's CPU system (tests/test_thrust_cpu.cpp); the device run is
 * tests/test_gpu_backend.c's gpu_pattern_* cases. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "fem.h"
#include "fem_pattern_gpu.h"
#include "tw_thrust.h"

tw_status tw_fem_pattern_gpu(tw_fem *f)
{
    tw_thrust_pattern dev, host;
    /* the world's stream does not exist yet (the CUDA world uploads this
     * pattern): a non-blocking stream of its own, waited for before the
     * pattern is read, keeps Thrust off the legacy default stream */
    cudaStream_t stream = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    tw_status st = e == cudaSuccess ? tw_thrust_build_pattern(f->tets, 0, f->n, f->nt, stream, &dev)
                                    : tw_fail(TW_ERR_DEVICE, "%s:%d: cudaStreamCreateWithFlags: %s", __FILE__,
                                              __LINE__, cudaGetErrorString(e));
    if (stream) cudaStreamDestroy(stream);
    if (st == TW_OK) {
        st = tw_thrust_pattern_to_host(&dev, &host);
        tw_thrust_pattern_free(&dev); /* device memory back before the CUDA world's upload */
    }
    if (st != TW_OK) {
        fprintf(stderr,
                "tetwarp: building the FEM pattern of %d elements on the GPU failed (%s); building it on the CPU "
                "instead (only this precompute step moves: the world still runs on the CUDA backend)\n",
                f->nt, tw_last_error());
        return st;
    }
    f->nnzb = host.nnzb;
    f->row_ptr = host.row_ptr;
    f->col = host.col;
    f->diag = host.diag;
    f->contrib_ptr = host.contrib_ptr;
    f->contrib = host.contrib;
    f->vt_ptr = host.vt_ptr;
    f->vt = host.vt;
    free(host.block_row); /* the BSR kernels find rows by row_ptr */
    return TW_OK;
}
