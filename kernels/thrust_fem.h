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
// The reductions accumulate in double whatever tw_real is. Their order is
// the device system's (a tree on the GPU), so a sum agrees with a plain loop
// to rounding, not bit for bit.
#ifndef TW_THRUST_FEM_H
#define TW_THRUST_FEM_H
#include <math.h>

#include <thrust/binary_search.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/set_operations.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>
#include <thrust/unique.h>

#include "tetwarp.h"

#ifdef __CUDACC__
#define TW_THRUST_HD __host__ __device__
#else
#define TW_THRUST_HD
#endif

namespace {

typedef thrust::device_vector<int> tw_ivec;
typedef thrust::device_vector<long long> tw_kvec;

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
static long tw_thrust_bad_indices(const int *tets, int n, int nt)
{
    thrust::device_ptr<const int> t = thrust::device_pointer_cast(tets);
    tw_out_of_range bad = {n};
    return (long)thrust::count_if(thrust::device, t, t + 4 * (long)nt, bad);
}

/* Builds the pattern of the nt elements tets (device pointer, 4 per element,
 * indices in [0, n): check with tw_thrust_bad_indices) into out. Throws
 * what Thrust throws (std::bad_alloc, thrust::system_error). */
static void tw_build_pattern_vectors(const int *tets, int n, int nt, tw_pattern_vectors &out)
{
    typedef thrust::counting_iterator<long long> count_it;
    thrust::device_ptr<const int> t = thrust::device_pointer_cast(tets);
    long nv4 = 4 * (long)nt, np = 16 * (long)nt;
    out.n = n;
    out.nt = nt;

    /* vertex -> (element, local) lists */
    {
        tw_ivec key(t, t + nv4);
        out.vt.resize(nv4);
        thrust::sequence(out.vt.begin(), out.vt.end());
        thrust::stable_sort_by_key(key.begin(), key.end(), out.vt.begin());
        out.vt_ptr.resize((size_t)n + 1);
        thrust::lower_bound(key.begin(), key.end(), thrust::counting_iterator<int>(0),
                            thrust::counting_iterator<int>(n + 1), out.vt_ptr.begin());
    }

    /* element pairs sorted by block: the gather lists */
    tw_kvec pair(np);
    tw_pair_key pk = {tets, n};
    thrust::transform(count_it(0), count_it(np), pair.begin(), pk);
    out.contrib.resize(np);
    thrust::sequence(out.contrib.begin(), out.contrib.end());
    thrust::stable_sort_by_key(pair.begin(), pair.end(), out.contrib.begin());

    /* the blocks: distinct pair keys, with every diagonal */
    tw_kvec block;
    {
        tw_kvec used((size_t)thrust::unique_count(pair.begin(), pair.end()));
        thrust::unique_copy(pair.begin(), pair.end(), used.begin());
        tw_scale_key dk = {(long long)n + 1};
        thrust::transform_iterator<tw_scale_key, count_it> diag_key(count_it(0), dk);
        block.resize(used.size() + (size_t)n);
        block.erase(thrust::set_union(used.begin(), used.end(), diag_key, diag_key + n, block.begin()), block.end());
    }
    out.nnzb = (int)block.size();

    tw_key_col kc = {n};
    tw_key_row kr = {n};
    out.col.resize(block.size());
    thrust::transform(block.begin(), block.end(), out.col.begin(), kc);
    out.block_row.resize(block.size());
    thrust::transform(block.begin(), block.end(), out.block_row.begin(), kr);

    tw_scale_key rk = {(long long)n}, dk = {(long long)n + 1};
    thrust::transform_iterator<tw_scale_key, count_it> row_first(count_it(0), rk), diag_key(count_it(0), dk);
    out.row_ptr.resize((size_t)n + 1);
    thrust::lower_bound(block.begin(), block.end(), row_first, row_first + (n + 1), out.row_ptr.begin());
    out.diag.resize((size_t)n);
    thrust::lower_bound(block.begin(), block.end(), diag_key, diag_key + n, out.diag.begin());

    out.contrib_ptr.resize(block.size() + 1);
    thrust::lower_bound(pair.begin(), pair.end(), block.begin(), block.end(), out.contrib_ptr.begin());
    out.contrib_ptr[block.size()] = (int)np;
}

/* ------------------------------------------------------------- reductions */

struct tw_to_double {
    TW_THRUST_HD double operator()(tw_real x) const { return (double)x; }
};
struct tw_mul_double {
    TW_THRUST_HD double operator()(tw_real a, tw_real b) const { return (double)a * (double)b; }
};

/* |x[i]| and i; the reduction keeps the largest, NaN above everything (so a
 * blow-up is found), the lowest index among equals. */
struct tw_abs_at {
    double value;
    long index;
};
struct tw_abs_of {
    const tw_real *x;
    TW_THRUST_HD tw_abs_at operator()(long i) const
    {
        tw_abs_at r;
        r.value = fabs((double)x[i]);
        r.index = i;
        return r;
    }
};
struct tw_abs_max {
    TW_THRUST_HD tw_abs_at operator()(const tw_abs_at &a, const tw_abs_at &b) const
    {
        bool an = a.value != a.value, bn = b.value != b.value;
        if (an != bn) return an ? a : b;
        if (!an && a.value != b.value) return a.value > b.value ? a : b;
        return a.index < b.index ? a : b;
    }
};

struct tw_kinetic_of {
    const tw_real *v, *mass;
    TW_THRUST_HD double operator()(long i) const
    {
        double a = v[3 * i], b = v[3 * i + 1], c = v[3 * i + 2];
        return 0.5 * (double)mass[i] * (a * a + b * b + c * c);
    }
};

/* Signed volume of element e at positions x; the reduction sums them and
 * keeps the smallest (lowest index among equals). */
struct tw_volume_stats {
    double total, min;
    long min_element;
};
struct tw_volume_of {
    const tw_real *x;
    const int *tets;
    TW_THRUST_HD tw_volume_stats operator()(long e) const
    {
        const int *t = tets + 4 * e;
        double d[3][3];
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) d[r][c] = (double)x[3 * (long)t[c + 1] + r] - (double)x[3 * (long)t[0] + r];
        double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                     d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                     d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]); /* fem.c's tw_tet_gradients, term for term */
        tw_volume_stats s;
        s.total = s.min = det / 6.0;
        s.min_element = e;
        return s;
    }
};
struct tw_volume_merge {
    TW_THRUST_HD tw_volume_stats operator()(const tw_volume_stats &a, const tw_volume_stats &b) const
    {
        tw_volume_stats s;
        s.total = a.total + b.total;
        bool pick_a = a.min < b.min || (a.min == b.min && a.min_element < b.min_element);
        s.min = pick_a ? a.min : b.min;
        s.min_element = pick_a ? a.min_element : b.min_element;
        return s;
    }
};

/* All pointers are the device system's (device memory under CUDA). */
static double tw_thrust_sum_of(const tw_real *x, long count)
{
    thrust::device_ptr<const tw_real> p = thrust::device_pointer_cast(x);
    return thrust::transform_reduce(thrust::device, p, p + count, tw_to_double(), 0.0, thrust::plus<double>());
}

static double tw_thrust_dot_of(const tw_real *a, const tw_real *b, long count)
{
    thrust::device_ptr<const tw_real> pa = thrust::device_pointer_cast(a), pb = thrust::device_pointer_cast(b);
    return thrust::inner_product(thrust::device, pa, pa + count, pb, 0.0, thrust::plus<double>(), tw_mul_double());
}

/* index -1 and value 0 for count 0 */
static tw_abs_at tw_thrust_max_abs_of(const tw_real *x, long count)
{
    tw_abs_at none;
    none.value = 0;
    none.index = -1;
    tw_abs_of f = {x};
    return thrust::transform_reduce(thrust::device, thrust::counting_iterator<long>(0),
                                    thrust::counting_iterator<long>(count), f, none, tw_abs_max());
}

/* sum of m |v|^2 / 2, J */
static double tw_thrust_kinetic_of(const tw_real *v, const tw_real *mass, int n)
{
    tw_kinetic_of f = {v, mass};
    return thrust::transform_reduce(thrust::device, thrust::counting_iterator<long>(0),
                                    thrust::counting_iterator<long>(n), f, 0.0, thrust::plus<double>());
}

/* total and smallest signed volume, m^3 (min_element -1 and min HUGE_VAL for nt 0) */
static tw_volume_stats tw_thrust_volume_of(const tw_real *x, const int *tets, int nt)
{
    tw_volume_stats none;
    none.total = 0;
    none.min = HUGE_VAL;
    none.min_element = -1;
    tw_volume_of f = {x, tets};
    return thrust::transform_reduce(thrust::device, thrust::counting_iterator<long>(0),
                                    thrust::counting_iterator<long>(nt), f, none, tw_volume_merge());
}

} // namespace
#endif
