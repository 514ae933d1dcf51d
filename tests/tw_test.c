#include "tw_test.h"

#include <stdlib.h>
#include <string.h>

#define TW_MAX_TESTS 256
static struct { const char *name; tw_test_fn fn; } tw_tests[TW_MAX_TESTS];
static int tw_test_count;

void tw_test_register(const char *name, tw_test_fn fn)
{
    if (tw_test_count < TW_MAX_TESTS) {
        tw_tests[tw_test_count].name = name;
        tw_tests[tw_test_count].fn = fn;
        tw_test_count++;
    }
}

const char *tw_test_mesh_path(const char *file)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/meshes/%s", TW_DATA_DIR, file);
    return buf[k];
}

const char *tw_test_tmp_path(const char *file)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", TW_TEST_TMP, file);
    return buf[k];
}

int tw_test_gpu_skip(void)
{
    char why[256] = "";
    if (!tw_backend_usable(TW_BACKEND_CUDA, why, sizeof why)) {
        printf("%s: skipped\n", why);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TEST | --list\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < tw_test_count; i++) {
        if (strcmp(argv[1], "--list") == 0) {
            printf("%s\n", tw_tests[i].name);
            continue;
        }
        if (strcmp(argv[1], tw_tests[i].name) == 0) {
            int r = tw_tests[i].fn();
            if (r == TW_SKIP) printf("SKIPPED %s\n", argv[1]);
            else printf("%s %s\n", r == 0 ? "PASSED" : "FAILED", argv[1]);
            return r;
        }
    }
    if (strcmp(argv[1], "--list") == 0) return 0;
    fprintf(stderr, "%s: no test named '%s'\n", argv[0], argv[1]);
    return 2;
}
