/* Test helpers over host/fem.h's tw_fem (a private header: only the tests
 * built in tests/ see it). */
#ifndef TW_TEST_FEM_H
#define TW_TEST_FEM_H
#include "fem.h"

/* 1 when a and b hold the same BSR pattern, gather lists and K, bit for bit,
 * and with masses_too also the same masses and gradients; else 0, naming
 * the first array that differs on stderr. */
int tw_test_fem_same(const tw_fem *a, const tw_fem *b, int masses_too);
#endif
