// Thrust on the CUDA device system, as the engine's entry points use it:
// the algorithms' temporary storage that never throws when freeing, the
// execution policy on a stream, and the catch clauses that turn Thrust's
// exceptions into a tw_status naming the file, the line and the call (so
// unwinding after a sticky CUDA error ends there, not in std::terminate).
// CUDA only: thrust_fem.h holds what also builds for Thrust's CPU system.
#ifndef TW_THRUST_DEVICE_CUH
#define TW_THRUST_DEVICE_CUH
#include <cstddef>
#include <exception>
#include <new>

#include <thrust/system/cuda/error.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include "cuda_internal.h" /* tw_fail */

/* Temporary storage for the algorithms (sort buffers): cudaMalloc, throwing
 * as Thrust does on failure, and a cudaFree that never throws (it runs in
 * destructors). */
struct tw_temp_allocator {
    typedef char value_type;
    char *allocate(std::ptrdiff_t n)
    {
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, (size_t)n);
        if (e == cudaErrorMemoryAllocation) throw std::bad_alloc();
        if (e != cudaSuccess) throw thrust::system_error(e, thrust::cuda_category(), "cudaMalloc (Thrust temporary)");
        return (char *)p;
    }
    void deallocate(char *p, size_t) noexcept { cudaFree(p); }
};

/* The policy every algorithm here runs under. */
static inline auto tw_on(cudaStream_t stream, tw_temp_allocator &temp) { return thrust::cuda::par(temp).on(stream); }

/* The catch clauses every entry point ends with. */
#define TW_THRUST_CATCH(call)                                                                                  \
    catch (const std::bad_alloc &e_)                                                                           \
    {                                                                                                          \
        cudaGetLastError();                                                                                    \
        return tw_fail(TW_ERR_NOMEM, "%s:%d: %s: out of device memory (%s)", __FILE__, __LINE__, call,        \
                       e_.what());                                                                             \
    }                                                                                                          \
    catch (const std::exception &e_)                                                                           \
    {                                                                                                          \
        cudaGetLastError();                                                                                    \
        return tw_fail(TW_ERR_DEVICE, "%s:%d: %s failed: %s", __FILE__, __LINE__, call, e_.what());            \
    }
#endif
