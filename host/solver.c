#include "solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsr_half.h"
#include "error.h"
#include "hd/hd.h"

#define TW_S_REAL tw_real
#define TW_S(name) name
#include "solver_impl.h"
#undef TW_S_REAL
#undef TW_S

#ifndef TW_DOUBLE
#define TW_S_REAL double
#define TW_S(name) name##_d
#include "solver_impl.h"
#undef TW_S_REAL
#undef TW_S
#endif
