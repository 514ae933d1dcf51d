// The tetra front's BSR pattern updated at a switch by sort / merge, written
// once for two device systems: cuda_front.cu compiles it for CUDA, a CPU test
// (tests/test_thrust_front_cpu.cpp) for Thrust's CPP system against the CPU
// front's own pattern (host/tetra_front.c). C++ only, internal linkage, as
// thrust_fem.h (whose vectors it uses).
//
// The pattern is kept as sorted 64-bit keys u * nv + w over finest vertex
// ids (a block (row u, column w) of the system, both free vertices). The
// reduced numbering follows vertex order, so the key order is the reduced
// (row, column) order, and a switch that renumbers the free vertices leaves
// the kept keys valid. At a switch the host names the rows it redoes (the
// slots of the tets whose slots or weights changed and of the tets that
// left: host/tetra_front.c) and hands over the slot lists of every active
// tet with a slot in a redone row. Then, as the CPU does:
//   kept:  the old keys minus those of redone rows and of rows no longer free
//          (remove_if);
//   fresh: every slot pair (s, q) of the handed tets with slot s's row
//          redone, key slot[s] * nv + slot[q] (transform), sorted and made
//          unique;
//   keys = merge(kept, fresh): disjoint by row, so the merge is the union;
//   block_row = rid[key / nv], col = rid[key % nv] (transform), row_ptr by
//   lower_bound of 0..n in block_row, diag by a scatter of the blocks whose
//   key has row == column.
#ifndef TW_THRUST_FRONT_H
#define TW_THRUST_FRONT_H
#include <thrust/merge.h>
#include <thrust/remove.h>
#include <thrust/scatter.h>

#include "thrust_fem.h"

#define TW_FRONT_SLOT_CAP 12 /* slots per tet in the handed lists (host/tetra_front.c MAX_SLOTS) */

namespace {

struct tw_front_drop_key { /* key of a redone row or of a row no longer free */
    const int *rid;
    const unsigned char *redo;
    long long nv;
    TW_THRUST_HD bool operator()(long long key) const
    {
        const long long u = key / nv;
        return redo[u] || rid[u] < 0;
    }
};
struct tw_front_pair_key { /* pair k = 144 t + 12 s + q of handed tet t -> its key, or -1 */
    const int *slot;
    const unsigned char *redo;
    long long nv;
    TW_THRUST_HD long long operator()(long long k) const
    {
        const long long t = k / (TW_FRONT_SLOT_CAP * TW_FRONT_SLOT_CAP);
        const int s = (int)(k / TW_FRONT_SLOT_CAP % TW_FRONT_SLOT_CAP), q = (int)(k % TW_FRONT_SLOT_CAP);
        const int a = slot[TW_FRONT_SLOT_CAP * t + s], b = slot[TW_FRONT_SLOT_CAP * t + q];
        if (a < 0 || b < 0 || !redo[a]) return -1;
        return (long long)a * nv + b;
    }
};
struct tw_front_negative {
    TW_THRUST_HD bool operator()(long long k) const { return k < 0; }
};
struct tw_front_key_rid { /* key -> reduced index of its row (column 0) or column (1) */
    const int *rid;
    long long nv;
    int column;
    TW_THRUST_HD int operator()(long long key) const { return rid[column ? key % nv : key / nv]; }
};
struct tw_front_key_diag {
    long long nv;
    TW_THRUST_HD bool operator()(long long key) const { return key / nv == key % nv; }
};

/* The front's pattern in device vectors: keys (kept across switches) and the
 * reduced BSR arrays of the current front. */
struct tw_front_pattern_vectors {
    int n = 0, nnzb = 0;
    tw_kvec keys;
    tw_ivec row_ptr, col, diag, block_row;
};

/* Updates p to the front with n free vertices; rid (nv, reduced index or
 * -1), redo (nv, 1 where the row is redone) and slot (TW_FRONT_SLOT_CAP per
 * handed tet, vertex ids, -1 past the tet's count) are pointers of the
 * policy's system. From empty keys with every free row redone it builds the
 * pattern from scratch. Throws what Thrust throws. */
template <class Policy>
static void tw_front_pattern_update(const Policy &exec, int nv, int n, const int *rid, const unsigned char *redo,
                                    long ntet, const int *slot, tw_front_pattern_vectors &p)
{
    typedef thrust::counting_iterator<long long> count_it;
    const long long NV = nv;
    tw_front_drop_key drop = {rid, redo, NV};
    p.keys.erase(thrust::remove_if(exec, p.keys.begin(), p.keys.end(), drop), p.keys.end());

    const long long np = (long long)TW_FRONT_SLOT_CAP * TW_FRONT_SLOT_CAP * ntet;
    tw_kvec fresh((size_t)np);
    tw_front_pair_key pk = {slot, redo, NV};
    thrust::transform(exec, count_it(0), count_it(np), fresh.begin(), pk);
    fresh.erase(thrust::remove_if(exec, fresh.begin(), fresh.end(), tw_front_negative()), fresh.end());
    thrust::sort(exec, fresh.begin(), fresh.end());
    fresh.erase(thrust::unique(exec, fresh.begin(), fresh.end()), fresh.end());

    tw_kvec merged(p.keys.size() + fresh.size());
    thrust::merge(exec, p.keys.begin(), p.keys.end(), fresh.begin(), fresh.end(), merged.begin());
    p.keys.swap(merged);

    p.n = n;
    p.nnzb = (int)p.keys.size();
    tw_front_key_rid kr = {rid, NV, 0}, kc = {rid, NV, 1};
    p.block_row.resize(p.keys.size());
    thrust::transform(exec, p.keys.begin(), p.keys.end(), p.block_row.begin(), kr);
    p.col.resize(p.keys.size());
    thrust::transform(exec, p.keys.begin(), p.keys.end(), p.col.begin(), kc);
    p.row_ptr.resize((size_t)n + 1);
    thrust::lower_bound(exec, p.block_row.begin(), p.block_row.end(), thrust::counting_iterator<int>(0),
                        thrust::counting_iterator<int>(n + 1), p.row_ptr.begin());
    p.diag.resize((size_t)(n ? n : 1));
    thrust::fill(exec, p.diag.begin(), p.diag.end(), -1);
    tw_front_key_diag kd = {NV};
    thrust::scatter_if(exec, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(p.nnzb),
                       p.block_row.begin(), thrust::make_transform_iterator(p.keys.begin(), kd), p.diag.begin());
}

} // namespace
#endif
