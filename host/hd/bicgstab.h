/* BiCGStab's scalar recurrences and stopping rules, written once for
 * host/solver_impl.h's tw_bicgstab and the device's host-driven loop
 * (kernels/cuda_bicgstab.cu). Each side computes the dot products its own
 * way (both in double) and updates its vectors itself; every decision on
 * those dots is taken here, so the CPU's tests run the device's scalar
 * arithmetic. TW_HD inline, C11 and nvcc alike (see hd.h).
 *
 * One iteration (block-Jacobi M, the filter S, y scratch), from
 * r = S(b - A x), rhat = r, p = v = 0, rho = alpha = omega = 1:
 *   rho' = rhat.r         stop if |rho'| < 1e-300   (tw_bicg_beta)
 *   beta = (rho' / rho) (alpha / omega), rho = rho'
 *   p = r + beta (p - omega v), y = S M p, v = S A y
 *   alpha = rho / rhat.v  stop if |rhat.v| < 1e-300 (tw_bicg_alpha)
 *   x += alpha y, s = r - alpha v
 *   |s| <= tol |S b|: r = s, converged             (tw_bicg_converged)
 *   y = S M s, t = S A y, omega = t.s / t.t (0 if t.t <= 0) (tw_bicg_omega)
 *   x += omega y, r = s - omega t; stop if omega = 0
 * while fewer than max_iterations ran and |r| > tol |S b| (tw_bicg_more). */
#ifndef TW_HD_BICGSTAB_H
#define TW_HD_BICGSTAB_H
#include <math.h>

#include "hd/hd.h"

/* The recurrences' state: the scalars carried from one iteration to the
 * next, and the stopping rule's yardstick tol |S b|. */
typedef struct tw_bicg {
    double rho, alpha, omega;
    double bnorm; /* |S b|, or 1 when it is 0 (the residual is then absolute) */
    double tol;   /* relative tolerance on |r| / bnorm */
} tw_bicg;

/* The state before the first iteration, from |S b| and the tolerance. */
TW_HD tw_bicg tw_bicg_start(double bnorm, double tol)
{
    tw_bicg s;
    s.rho = s.alpha = s.omega = 1;
    s.bnorm = bnorm < 1e-300 ? 1 : bnorm;
    s.tol = tol;
    return s;
}

/* 1 while another iteration runs: it of max_iterations ran, |r| = rn. */
TW_HD int tw_bicg_more(const tw_bicg *s, int it, int max_iterations, double rn)
{
    return it < max_iterations && rn > s->tol * s->bnorm;
}

/* |r| (or |s|) = rn within the tolerance. */
TW_HD int tw_bicg_converged(const tw_bicg *s, double rn) { return rn <= s->tol * s->bnorm; }

/* From rho' = rhat.r: the direction's beta into *beta, rho = rho'; 0 (and
 * nothing changed) on a breakdown, |rho'| < 1e-300. */
TW_HD int tw_bicg_beta(tw_bicg *s, double rho_new, double *beta)
{
    if (fabs(rho_new) < 1e-300) return 0;
    *beta = (rho_new / s->rho) * (s->alpha / s->omega);
    s->rho = rho_new;
    return 1;
}

/* From rv = rhat.v: alpha = rho / rv; 0 (alpha unchanged) on a breakdown,
 * |rv| < 1e-300. */
TW_HD int tw_bicg_alpha(tw_bicg *s, double rv)
{
    if (fabs(rv) < 1e-300) return 0;
    s->alpha = s->rho / rv;
    return 1;
}

/* From tt = t.t and ts = t.s: omega = ts / tt, 0 when tt <= 0 (ts is then
 * not read: the CPU skips computing it); returns omega. An omega of 0 ends
 * the loop after its update. */
TW_HD double tw_bicg_omega(tw_bicg *s, double tt, double ts)
{
    s->omega = tt > 0 ? ts / tt : 0;
    return s->omega;
}

/* The solve's reported residual |r| / |S b|. */
TW_HD double tw_bicg_residual(const tw_bicg *s, double rn) { return rn / s->bnorm; }

#endif
