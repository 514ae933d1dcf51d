/* The names of methods, integrators and backends, and their parsers. */
#include <string.h>

#include "tetwarp.h"

static const char *const method_names[TW_METHOD_COUNT] = {"linear",        "warp-vertex", "warp-edge",
                                                          "corot-element", "green",       "hybrid"};

const char *tw_method_name(tw_method m) { return (unsigned)m < TW_METHOD_COUNT ? method_names[m] : "unknown"; }

int tw_method_parse(const char *name)
{
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        if (name && strcmp(name, method_names[m]) == 0) return m;
    return -1;
}

static const char *const integrator_names[TW_INTEGRATOR_COUNT] = {"implicit-euler", "bdf2", "explicit-newmark"};

const char *tw_integrator_name(tw_integrator i)
{
    return (unsigned)i < TW_INTEGRATOR_COUNT ? integrator_names[i] : "unknown";
}

int tw_integrator_parse(const char *name)
{
    for (int i = 0; i < TW_INTEGRATOR_COUNT; i++)
        if (name && strcmp(name, integrator_names[i]) == 0) return i;
    return -1;
}

const char *tw_backend_name(tw_backend b)
{
    return b == TW_BACKEND_CPU ? "cpu" : b == TW_BACKEND_CUDA ? "cuda" : b == TW_BACKEND_AUTO ? "auto" : "unknown";
}

int tw_backend_parse(const char *name)
{
    if (!name) return -1;
    if (strcmp(name, "cpu") == 0) return TW_BACKEND_CPU;
    if (strcmp(name, "cuda") == 0) return TW_BACKEND_CUDA;
    if (strcmp(name, "auto") == 0) return TW_BACKEND_AUTO;
    return -1;
}
