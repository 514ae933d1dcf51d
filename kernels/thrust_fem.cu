// The C entry points of tw_thrust.h: thrust_fem.h's algorithms on the CUDA
// device system. Thrust reports failures by throwing (std::bad_alloc for
// device memory, thrust::system_error for CUDA errors); every entry point
// catches them and returns a tw_status whose message names this file, the
// line and the call. Device arrays live in thrust::device_vectors owned by a
// tw_thrust_storage, so an error part-way frees what was made; neither they
// (tw_quiet_allocator) nor the algorithms' temporary storage
// (tw_temp_allocator) throw when freeing, so unwinding after a sticky CUDA
// error ends in the catch clauses, not in std::terminate. The algorithms run
// on the caller's stream (thrust::cuda::par(...).on(stream)), which Thrust
// synchronizes after each; the vectors' own allocation and zero fill are
// synchronous too.
//
// NEVER RUN ON A GPU YET: compiled on a machine without one; the algorithms
// themselves are checked on the CPU (tests/test_thrust_cpu.cpp).
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <exception>
#include <memory>
#include <new>

#include <thrust/system/cuda/error.h>
#include <thrust/system_error.h>

#include "cuda_internal.h" /* TW_CUDA_TRY */
#include "thrust_device.cuh"
#include "thrust_fem.h"
#include "tw_thrust.h"

struct tw_thrust_storage {
    tw_pattern_vectors v;
};

static tw_status check_counts(const char *fn, int n, int nt)
{
    if (n < 1 || nt < 0 || nt > INT_MAX / 16)
        return tw_fail(TW_ERR_INVALID, "%s: %d vertices and %d elements: need n >= 1 and 0 <= nt <= %d", fn, n, nt,
                       INT_MAX / 16);
    return TW_OK;
}

template <class Policy>
static tw_status check_indices(const Policy &exec, const char *fn, const int *dtets, int n, int nt)
{
    long bad = tw_thrust_bad_indices(exec, dtets, n, nt);
    if (bad)
        return tw_fail(TW_ERR_INVALID, "%s: %ld of the %ld vertex indices lie outside [0, %d)", fn, bad, 4 * (long)nt,
                       n);
    return TW_OK;
}

static void expose(tw_thrust_pattern *p, tw_pattern_vectors &v)
{
    p->n = v.n;
    p->nt = v.nt;
    p->nnzb = v.nnzb;
    p->row_ptr = thrust::raw_pointer_cast(v.row_ptr.data());
    p->col = thrust::raw_pointer_cast(v.col.data());
    p->diag = thrust::raw_pointer_cast(v.diag.data());
    p->block_row = thrust::raw_pointer_cast(v.block_row.data());
    p->contrib_ptr = thrust::raw_pointer_cast(v.contrib_ptr.data());
    p->contrib = thrust::raw_pointer_cast(v.contrib.data());
    p->vt_ptr = thrust::raw_pointer_cast(v.vt_ptr.data());
    p->vt = thrust::raw_pointer_cast(v.vt.data());
}

extern "C" tw_status tw_thrust_build_pattern(const int *tets, int tets_on_device, int n, int nt, void *stream,
                                             tw_thrust_pattern *out)
{
    memset(out, 0, sizeof *out);
    tw_status st = check_counts("tw_thrust_build_pattern", n, nt);
    if (st != TW_OK) return st;
    cudaStream_t strm = (cudaStream_t)stream;
    try {
        tw_temp_allocator temp;
        auto exec = tw_on(strm, temp);
        tw_ivec uploaded;
        const int *dtets = tets;
        if (!tets_on_device) {
            uploaded.resize(4 * (size_t)nt);
            TW_CUDA_TRY(cudaMemcpyAsync(thrust::raw_pointer_cast(uploaded.data()), tets, sizeof(int) * 4 * (size_t)nt,
                                        cudaMemcpyHostToDevice, strm));
            dtets = thrust::raw_pointer_cast(uploaded.data());
        }
        st = check_indices(exec, "tw_thrust_build_pattern", dtets, n, nt);
        if (st != TW_OK) return st;
        std::unique_ptr<tw_thrust_storage> s(new tw_thrust_storage);
        tw_build_pattern_vectors(exec, dtets, n, nt, s->v);
        TW_CUDA_TRY(cudaStreamSynchronize(strm));
        expose(out, s->v);
        out->storage = s.release();
        return TW_OK;
    }
    TW_THRUST_CATCH("tw_build_pattern_vectors (sort / unique / scan of the element pairs)")
}

void tw_thrust_pattern_free(tw_thrust_pattern *p)
{
    if (p->storage) {
        delete p->storage;
    } else {
        free(p->row_ptr); free(p->col); free(p->diag); free(p->block_row);
        free(p->contrib_ptr); free(p->contrib); free(p->vt_ptr); free(p->vt);
    }
    memset(p, 0, sizeof *p);
}

static tw_status download(int **dst, const int *src, size_t count, const char *what)
{
    *dst = (int *)malloc(sizeof(int) * (count ? count : 1));
    if (!*dst) return tw_fail(TW_ERR_NOMEM, "out of host memory for %zu ints (%s)", count, what);
    TW_CUDA_TRY(cudaMemcpy(*dst, src, sizeof(int) * count, cudaMemcpyDeviceToHost));
    return TW_OK;
}

extern "C" tw_status tw_thrust_pattern_to_host(const tw_thrust_pattern *d, tw_thrust_pattern *h)
{
    memset(h, 0, sizeof *h);
    h->n = d->n;
    h->nt = d->nt;
    h->nnzb = d->nnzb;
    size_t n = (size_t)d->n, nt = (size_t)d->nt, nnzb = (size_t)d->nnzb;
    tw_status st = TW_OK;
    if (st == TW_OK) st = download(&h->row_ptr, d->row_ptr, n + 1, "row_ptr");
    if (st == TW_OK) st = download(&h->col, d->col, nnzb, "col");
    if (st == TW_OK) st = download(&h->diag, d->diag, n, "diag");
    if (st == TW_OK) st = download(&h->block_row, d->block_row, nnzb, "block_row");
    if (st == TW_OK) st = download(&h->contrib_ptr, d->contrib_ptr, nnzb + 1, "contrib_ptr");
    if (st == TW_OK) st = download(&h->contrib, d->contrib, 16 * nt, "contrib");
    if (st == TW_OK) st = download(&h->vt_ptr, d->vt_ptr, n + 1, "vt_ptr");
    if (st == TW_OK) st = download(&h->vt, d->vt, 4 * nt, "vt");
    if (st != TW_OK) tw_thrust_pattern_free(h);
    return st;
}

/* Two events and a stream, destroyed however the timing ends. */
struct tw_event_pair {
    cudaEvent_t a = nullptr, b = nullptr;
    cudaStream_t s = nullptr;
    ~tw_event_pair()
    {
        if (a) cudaEventDestroy(a);
        if (b) cudaEventDestroy(b);
        if (s) cudaStreamDestroy(s);
    }
};

extern "C" tw_status tw_thrust_pattern_time(const int *tets, int n, int nt, double *ms)
{
    tw_status st = check_counts("tw_thrust_pattern_time", n, nt);
    if (st != TW_OK) return st;
    try {
        tw_event_pair ev;
        TW_CUDA_TRY(cudaStreamCreateWithFlags(&ev.s, cudaStreamNonBlocking));
        tw_temp_allocator temp;
        auto exec = tw_on(ev.s, temp);
        tw_ivec dtets(4 * (size_t)nt);
        TW_CUDA_TRY(cudaMemcpyAsync(thrust::raw_pointer_cast(dtets.data()), tets, sizeof(int) * 4 * (size_t)nt,
                                    cudaMemcpyHostToDevice, ev.s));
        const int *dt = thrust::raw_pointer_cast(dtets.data());
        st = check_indices(exec, "tw_thrust_pattern_time", dt, n, nt);
        if (st != TW_OK) return st;
        {
            tw_pattern_vectors warm; /* first use: context, Thrust's temporary storage */
            tw_build_pattern_vectors(exec, dt, n, nt, warm);
        }
        TW_CUDA_TRY(cudaEventCreate(&ev.a));
        TW_CUDA_TRY(cudaEventCreate(&ev.b));
        TW_CUDA_TRY(cudaEventRecord(ev.a, ev.s));
        {
            tw_pattern_vectors v;
            tw_build_pattern_vectors(exec, dt, n, nt, v);
            TW_CUDA_TRY(cudaEventRecord(ev.b, ev.s)); /* before v's arrays are freed */
        }
        TW_CUDA_TRY(cudaEventSynchronize(ev.b));
        float t = 0;
        TW_CUDA_TRY(cudaEventElapsedTime(&t, ev.a, ev.b));
        *ms = t;
        return TW_OK;
    }
    TW_THRUST_CATCH("tw_thrust_pattern_time")
}
