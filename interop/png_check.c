/* png_check: small assertions on rendered frames, for the viewer's tests.
 *
 *   png_check FILE --not-blank [MIN]      at least MIN (default 200) pixels differ
 *                                         from the background (the top-left pixel)
 *   png_check A B --lower-centroid [PX]   the vertical centroid of B's non-background
 *                                         pixels lies at least PX (default 2) rows
 *                                         lower than A's
 *   png_check FILE --more COLOR COLOR2    more pixels of hue COLOR than of COLOR2
 *                                         (red, green, blue)
 *   png_check A B --same [TOL [COUNT]]    the same size, and at most COUNT (default 0)
 *                                         pixels differ by more than TOL (default 2)
 *                                         in some channel
 *
 * Prints what it measured; exits 0 when the assertion holds, 1 when it does
 * not, 2 on bad usage or an unreadable file. */
#include "png_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct image {
    unsigned char *rgb;
    int w, h;
} image;

static int load(const char *path, image *im)
{
    char err[512];
    if (png_read_rgb(path, &im->rgb, &im->w, &im->h, err, sizeof err)) {
        fprintf(stderr, "png_check: %s\n", err);
        return -1;
    }
    return 0;
}

static int differs(const unsigned char *p, const unsigned char *bg)
{
    int d = 0;
    for (int k = 0; k < 3; k++) d += abs((int)p[k] - (int)bg[k]);
    return d > 24;
}

/* Non-background pixel count and the mean row of those pixels. */
static long foreground(const image *im, double *mean_row)
{
    const unsigned char *bg = im->rgb;
    long n = 0;
    double sum = 0;
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++)
            if (differs(im->rgb + 3 * ((size_t)y * (size_t)im->w + (size_t)x), bg)) {
                n++;
                sum += y;
            }
    *mean_row = n ? sum / (double)n : -1;
    return n;
}

/* 0 red, 1 green, 2 blue: a pixel whose channel k exceeds both others by 35 %. */
static int hue_index(const char *name)
{
    if (!strcmp(name, "red")) return 0;
    if (!strcmp(name, "green")) return 1;
    if (!strcmp(name, "blue")) return 2;
    return -1;
}

static long count_hue(const image *im, int k)
{
    long n = 0;
    for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i++) {
        const unsigned char *p = im->rgb + 3 * i;
        int a = p[(k + 1) % 3], b = p[(k + 2) % 3];
        if (p[k] > 40 && p[k] * 100 > a * 135 && p[k] * 100 > b * 135) n++;
    }
    return n;
}

static int usage(void)
{
    fprintf(stderr, "usage: png_check FILE --not-blank [MIN]\n"
                    "       png_check A B --lower-centroid [PIXELS]\n"
                    "       png_check FILE --more red|green|blue red|green|blue\n"
                    "       png_check A B --same [TOLERANCE [COUNT]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[2], "--not-blank")) {
        long min = argc >= 4 ? atol(argv[3]) : 200;
        image im;
        if (load(argv[1], &im)) return 2;
        double row;
        long n = foreground(&im, &row);
        printf("%s: %dx%d, %ld pixels differ from the background (need >= %ld)\n", argv[1], im.w, im.h,
               n, min);
        free(im.rgb);
        return n >= min ? 0 : 1;
    }
    if (argc >= 4 && !strcmp(argv[3], "--lower-centroid")) {
        double px = argc >= 5 ? atof(argv[4]) : 2;
        image a, b;
        if (load(argv[1], &a)) return 2;
        if (load(argv[2], &b)) {
            free(a.rgb);
            return 2;
        }
        double ra, rb;
        long na = foreground(&a, &ra), nb = foreground(&b, &rb);
        printf("vertical centroid of the foreground: %s row %.1f (%ld px), %s row %.1f (%ld px): %+.1f "
               "rows (need >= %+.1f, rows grow downwards)\n",
               argv[1], ra, na, argv[2], rb, nb, rb - ra, px);
        free(a.rgb);
        free(b.rgb);
        return na > 0 && nb > 0 && rb - ra >= px ? 0 : 1;
    }
    if (argc >= 5 && !strcmp(argv[2], "--more")) {
        int k1 = hue_index(argv[3]), k2 = hue_index(argv[4]);
        if (k1 < 0 || k2 < 0) return usage();
        image im;
        if (load(argv[1], &im)) return 2;
        long n1 = count_hue(&im, k1), n2 = count_hue(&im, k2);
        printf("%s: %ld %s pixels, %ld %s pixels\n", argv[1], n1, argv[3], n2, argv[4]);
        free(im.rgb);
        return n1 > n2 ? 0 : 1;
    }
    if (argc >= 4 && !strcmp(argv[3], "--same")) {
        int tol = argc >= 5 ? atoi(argv[4]) : 2;
        long allowed = argc >= 6 ? atol(argv[5]) : 0;
        image a, b;
        if (load(argv[1], &a)) return 2;
        if (load(argv[2], &b)) {
            free(a.rgb);
            return 2;
        }
        if (a.w != b.w || a.h != b.h) {
            printf("%s is %dx%d, %s is %dx%d\n", argv[1], a.w, a.h, argv[2], b.w, b.h);
            free(a.rgb);
            free(b.rgb);
            return 1;
        }
        int most = 0;
        long differ = 0, beyond = 0;
        for (size_t i = 0; i < (size_t)a.w * (size_t)a.h; i++) {
            int d = 0;
            for (int k = 0; k < 3; k++) {
                int e = abs((int)a.rgb[3 * i + k] - (int)b.rgb[3 * i + k]);
                d = e > d ? e : d;
            }
            most = d > most ? d : most;
            differ += d > 0;
            beyond += d > tol;
        }
        printf("%s vs %s (%dx%d): largest channel difference %d, %ld pixels differ, %ld by more than %d "
               "(allowed %ld)\n",
               argv[1], argv[2], a.w, a.h, most, differ, beyond, tol, allowed);
        free(a.rgb);
        free(b.rgb);
        return beyond <= allowed ? 0 : 1;
    }
    return usage();
}
