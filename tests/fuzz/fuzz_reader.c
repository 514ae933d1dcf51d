/* libFuzzer harness for one reader, chosen at compile time by TW_FUZZ_EXT:
 * ".node" (TetGen .node/.ele), ".msh" (Gmsh v1/v2/v4), ".mesh" (MEDIT),
 * ".obj", ".off", ".stl". Built by -DTW_FUZZ=ON (tests/fuzz/CMakeLists.txt),
 * run by tests/fuzz/run.sh.
 *
 * Each input is written to a file in a private temporary folder and loaded
 * through the public loader, as a user's file is: tw_mesh_load (then the
 * statistics `tetwarp info` prints), or tw_mesher_load_surface and
 * tw_surface_validate (what `tetwarp mesh` does before TetGen runs). A TetGen
 * input holds both files: the .node bytes, a NUL, the .ele bytes (no NUL: an
 * empty .ele).
 *
 * Besides the sanitizers, a failed load must leave a message that names the
 * file and contains printable ASCII only; anything else aborts. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesher.h"
#include "tetwarp.h"

#ifndef TW_FUZZ_EXT
#error "define TW_FUZZ_EXT (\".node\", \".msh\", \".mesh\", \".obj\", \".off\" or \".stl\")"
#endif

static char dir[256], path[320], ele_path[320];

static void cleanup(void)
{
    unlink(path);
    unlink(ele_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/tw_fuzz_XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        perror(dir);
        abort();
    }
    snprintf(path, sizeof path, "%s/input%s", dir, TW_FUZZ_EXT);
    snprintf(ele_path, sizeof ele_path, "%s/input.ele", dir);
    atexit(cleanup);
    return 0;
}

static void write_bytes(const char *file, const uint8_t *data, size_t size)
{
    FILE *f = fopen(file, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(file);
        abort();
    }
}

/* The message of a failed load: names the file, printable ASCII only. */
static void check_message(void)
{
    const char *msg = tw_last_error();
    if (!strstr(msg, "input.") && !strstr(msg, "out of memory")) {
        fprintf(stderr, "message does not name the file: %s\n", msg);
        abort();
    }
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 32 || *p > 126) {
            fprintf(stderr, "non-printable byte %d in the message: %s\n", *p, msg);
            abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t head = size;
    if (strcmp(TW_FUZZ_EXT, ".node") == 0) {
        const uint8_t *nul = memchr(data, 0, size);
        head = nul ? (size_t)(nul - data) : size;
        write_bytes(ele_path, nul ? nul + 1 : data, nul ? size - head - 1 : 0);
    }
    write_bytes(path, data, head);
    if (strcmp(TW_FUZZ_EXT, ".obj") == 0 || strcmp(TW_FUZZ_EXT, ".off") == 0 ||
        strcmp(TW_FUZZ_EXT, ".stl") == 0) {
        tw_surface *s = tw_mesher_load_surface(path);
        if (!s) {
            check_message();
            return 0;
        }
        tw_surface_check c;
        if (tw_surface_validate(s, path, &c) != TW_OK) check_message();
        else (void)tw_surface_volume(s);
        tw_surface_destroy(s);
    } else {
        tw_mesh_load_def def = tw_default_mesh_load_def();
        def.quiet = 1;
        tw_mesh *m = tw_mesh_load(path, &def, NULL);
        if (!m) {
            check_message();
            return 0;
        }
        (void)tw_mesh_compute_stats(m);
        tw_mesh_destroy(m);
    }
    return 0;
}
