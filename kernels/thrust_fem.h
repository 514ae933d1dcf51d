// Thrust algorithms on the FEM data, written once for two device systems:
// thrust_fem.cu compiles them for CUDA (the library), tests/test_thrust_cpu.cpp
// for Thrust's CPP system (THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP) so
// that a machine without a GPU checks them against host/fem.c. C++ only;
// everything here has internal linkage (an anonymous namespace), so the two
// compilations never meet at link time.
//
// The pattern, as host/fem.c builds it (see fem.h), by sort / unique / scan:
//   vt: the 4 nt keys tets[4e + p] with values 4e + p, stably sorted by key,
//       leave each vertex's (element, local) list in element order;
//       vt_ptr[i] = lower_bound(keys, i).
//   blocks: the 16 nt keys row * n + col of (tets[4e + p], tets[4e + q]) with
//       values 16e + 4p + q, stably sorted by key: the values are contrib,
//       each block's list in element order (a stable sort keeps the
//       generation order, which is fem.c's fill order). The distinct keys
//       are the blocks in (row, col) order; a set_union with the diagonal
//       keys i * (n + 1) adds the diagonal block fem.c keeps for a vertex no
//       element uses. Then col = key % n, block_row = key / n, and binary
//       searches give row_ptr (first key >= i n), diag (key i (n + 1)) and
//       contrib_ptr (first sorted pair key >= the block's key).
// Keys are 64-bit (n^2 overflows int past 46341 vertices); contrib holds
// 16e + 15 in an int, so nt <= INT_MAX / 16 (134 M elements).
//
// Every algorithm runs under the execution policy `exec` it is given:
// thrust_fem.cu passes the CUDA system on a stream with a temporary
// allocator that never throws from a destructor, the CPU test the CPP
// system. The vectors' allocator (tw_quiet_allocator) does not throw when
// freeing either: after a sticky CUDA error every cudaFree fails, and a
// throw while unwinding (a destructor is noexcept) would be std::terminate
// instead of the TW_ERR_DEVICE the entry points return.
#ifndef TW_THRUST_FEM_H
#define TW_THRUST_FEM_H
#include <math.h>

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_allocator.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/set_operations.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

#include "tetwarp.h"

#ifdef __CUDACC__
#define TW_THRUST_HD __host__ __device__
#else
#define TW_THRUST_HD
#endif

namespace {

/* The device system's allocator, whose deallocate swallows a failed free
 * (the memory is lost with the context after a sticky error anyway). */
template <class T>
struct tw_quiet_allocator : thrust::device_allocator<T> {
    typedef thrust::device_allocator<T> base;
    template <class U>
    struct rebind {
        typedef tw_quiet_allocator<U> other;
    };
    tw_quiet_allocator() {}
    tw_quiet_allocator(const tw_quiet_allocator &o) : base(o) {}
    template <class U>
    tw_quiet_allocator(const tw_quiet_allocator<U> &o) : base(o) {}
    void deallocate(typename base::pointer p, typename base::size_type n) noexcept
    {
        try {
            base::deallocate(p, n);
        } catch (...) {
        }
    }
};

typedef thrust::device_vector<int, tw_quiet_allocator<int> > tw_ivec;
typedef thrust::device_vector<long long, tw_quiet_allocator<long long> > tw_kvec;

/* The arrays of fem.h's BSR pattern and gather lists, plus block_row. */
struct tw_pattern_vectors {
    int n = 0, nt = 0, nnzb = 0;
    tw_ivec row_ptr, col, diag, block_row, contrib_ptr, contrib, vt_ptr, vt;
};

/* ---------------------------------------------------------------- pattern */

struct tw_pair_key { /* pair k = 16e + 4p + q -> (tets[4e+p], tets[4e+q]) as row * n + col */
    const int *tets;
    long long n;
    TW_THRUST_HD long long operator()(long long k) const
    {
        long long e = k >> 4;
        int p = (int)(k >> 2) & 3, q = (int)k & 3;
        return (long long)tets[4 * e + p] * n + tets[4 * e + q];
    }
};
struct tw_scale_key { /* i -> i * s */
    long long s;
    TW_THRUST_HD long long operator()(long long i) const { return i * s; }
};
struct tw_key_col {
    long long n;
    TW_THRUST_HD int operator()(long long key) const { return (int)(key % n); }
};
struct tw_key_row {
    long long n;
    TW_THRUST_HD int operator()(long long key) const { return (int)(key / n); }
};
struct tw_out_of_range {
    int n;
    TW_THRUST_HD bool operator()(int v) const { return v < 0 || v >= n; }
};

/* Number of indices of the 4 nt in tets (device) outside [0, n). */
template <class Policy>
static long tw_thrust_bad_indices(const Policy &exec, const int *tets, int n, int nt)
{
    thrust::device_ptr<const int> t = thrust::device_pointer_cast(tets);
    tw_out_of_range bad = {n};
    return (long)thrust::count_if(exec, t, t + 4 * (long)nt, bad);
}

/* Builds the pattern of the nt elements tets (device pointer, 4 per element,
 * indices in [0, n): check with tw_thrust_bad_indices) into out. Throws
 * what Thrust throws (std::bad_alloc, thrust::system_error). */
template <class Policy>
static void tw_build_pattern_vectors(const Policy &exec, const int *tets, int n, int nt, tw_pattern_vectors &out)
{
    typedef thrust::counting_iterator<long long> count_it;
    thrust::device_ptr<const int> t = thrust::device_pointer_cast(tets);
    long nv4 = 4 * (long)nt, np = 16 * (long)nt;
    out.n = n;
    out.nt = nt;

    /* vertex -> (element, local) lists */
    {
        tw_ivec key(nv4);
        thrust::copy(exec, t, t + nv4, key.begin());
        out.vt.resize(nv4);
        thrust::sequence(exec, out.vt.begin(), out.vt.end());
        thrust::stable_sort_by_key(exec, key.begin(), key.end(), out.vt.begin());
        out.vt_ptr.resize((size_t)n + 1);
        thrust::lower_bound(exec, key.begin(), key.end(), thrust::counting_iterator<int>(0),
                            thrust::counting_iterator<int>(n + 1), out.vt_ptr.begin());
    }

    /* element pairs sorted by block: the gather lists */
    tw_kvec pair(np);
    tw_pair_key pk = {tets, n};
    thrust::transform(exec, count_it(0), count_it(np), pair.begin(), pk);
    out.contrib.resize(np);
    thrust::sequence(exec, out.contrib.begin(), out.contrib.end());
    thrust::stable_sort_by_key(exec, pair.begin(), pair.end(), out.contrib.begin());

    /* the blocks: distinct pair keys, with every diagonal */
    tw_kvec block;
    {
        tw_kvec used((size_t)thrust::unique_count(exec, pair.begin(), pair.end()));
        thrust::unique_copy(exec, pair.begin(), pair.end(), used.begin());
        tw_scale_key dk = {(long long)n + 1};
        thrust::transform_iterator<tw_scale_key, count_it> diag_key(count_it(0), dk);
        block.resize(used.size() + (size_t)n);
        block.erase(thrust::set_union(exec, used.begin(), used.end(), diag_key, diag_key + n, block.begin()), block.end());
    }
    out.nnzb = (int)block.size();

    tw_key_col kc = {n};
    tw_key_row kr = {n};
    out.col.resize(block.size());
    thrust::transform(exec, block.begin(), block.end(), out.col.begin(), kc);
    out.block_row.resize(block.size());
    thrust::transform(exec, block.begin(), block.end(), out.block_row.begin(), kr);

    tw_scale_key rk = {(long long)n}, dk = {(long long)n + 1};
    thrust::transform_iterator<tw_scale_key, count_it> row_first(count_it(0), rk), diag_key(count_it(0), dk);
    out.row_ptr.resize((size_t)n + 1);
    thrust::lower_bound(exec, block.begin(), block.end(), row_first, row_first + (n + 1), out.row_ptr.begin());
    out.diag.resize((size_t)n);
    thrust::lower_bound(exec, block.begin(), block.end(), diag_key, diag_key + n, out.diag.begin());

    out.contrib_ptr.resize(block.size() + 1);
    thrust::lower_bound(exec, pair.begin(), pair.end(), block.begin(), block.end(), out.contrib_ptr.begin());
    thrust::fill_n(exec, out.contrib_ptr.begin() + block.size(), 1, (int)np);
}

} // namespace
#endif
