"""``python -m pipeline.query usl``: the Universal Scalability Law fitted to a
throughput-vs-concurrency sweep.

Gunther's USL: X(N) = lambda * N / (1 + sigma * (N - 1) + kappa * N * (N - 1)), with
``lambda`` the throughput of one client (the slope at N = 1), ``sigma`` the contention
(the serial fraction: Amdahl's law is kappa = 0) and ``kappa`` the coherency cost (the
crosstalk that makes throughput fall past a peak). With kappa > 0 the curve peaks at
N* = sqrt((1 - sigma) / kappa), X(N*) the most it predicts.

The fit (``fit``) is unweighted least squares on X, numpy only: for fixed (sigma, kappa)
the best lambda is closed-form (X is linear in it), so a log-spaced grid over (sigma,
kappa) - zero included for each - finds the basin, and a Levenberg-Marquardt with
bounds (a coefficient at its bound that the step would push past is held there) refines
all three with sigma in [0, 1] and kappa >= 0. Negative coefficients
have no physical meaning (a superlinear start - caches warming, a fixed per-run cost
shared by more clients - is not a negative contention); where the data wants them the
bound holds them at 0, and ``sigma`` or ``kappa`` reads 0 (``at_bound`` says which).
Unweighted means the points of highest throughput weigh the most: a fit in relative
error would weigh the low-N points more; we do not offer that choice.

``fit_runs`` selects the points from the results (one point per run: runs that differ
only in seed are several points at one N) and fits each configuration of the other
parameters that vary in the experiment on its own, as ``best`` names configurations.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

MIN_POINTS = 3          # three coefficients: fewer distinct N cannot pin them
_SIGMA_GRID = np.concatenate([[0.0], np.logspace(-6, 0, 121)])
_KAPPA_GRID = np.concatenate([[0.0], np.logspace(-9, 0, 181)])


class UslError(ValueError):
    pass


@dataclass(frozen=True)
class UslFit:
    """The fitted coefficients, the predicted peak and how well the curve fits."""

    lambda_: float              # throughput per client at N = 1 (the metric's unit)
    sigma: float                # contention, 0..1
    kappa: float                # coherency, >= 0
    n_points: int
    r2: float                   # 1 - SSE / SST over the points
    rmse: float                 # root mean squared residual (the metric's unit)
    at_bound: tuple[str, ...] = ()   # coefficients the non-negativity bound holds at 0

    @property
    def peak_n(self) -> float:
        """N* = sqrt((1 - sigma) / kappa); infinite without coherency cost (kappa = 0)."""
        if self.kappa <= 0:
            return math.inf
        return math.sqrt(max(0.0, 1.0 - self.sigma) / self.kappa)

    @property
    def peak_x(self) -> float:
        """X(N*); lambda / sigma (Amdahl's ceiling) when kappa = 0, infinite if both are 0."""
        if self.kappa <= 0:
            return self.lambda_ / self.sigma if self.sigma > 0 else math.inf
        return float(predict(self, self.peak_n))


def predict(f: UslFit, n) -> np.ndarray:
    n = np.asarray(n, dtype=float)
    return f.lambda_ * n / (1.0 + f.sigma * (n - 1.0) + f.kappa * n * (n - 1.0))


def _sse_grid(n: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """(lambda, sigma, kappa) of the least SSE over the grid, lambda closed-form."""
    s = _SIGMA_GRID[:, None, None]
    k = _KAPPA_GRID[None, :, None]
    g = n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))           # X = lambda * g
    gg = (g * g).sum(axis=2)
    lam = (g * x).sum(axis=2) / gg
    sse = (x * x).sum() - lam * (g * x).sum(axis=2)            # min over lambda, closed form
    i, j = np.unravel_index(int(np.argmin(sse)), sse.shape)
    return float(lam[i, j]), float(_SIGMA_GRID[i]), float(_KAPPA_GRID[j])


def _refine(n: np.ndarray, x: np.ndarray, p: np.ndarray, iters: int = 200) -> np.ndarray:
    """Levenberg-Marquardt on (lambda, sigma, kappa) with bounds: a coefficient at a
    bound that the step would push past it is held there (the step is solved for the
    others alone), every step is clipped to the bounds and accepted only when the SSE
    falls."""
    lo = np.array([0.0, 0.0, 0.0])
    hi = np.array([np.inf, 1.0, np.inf])

    def resid(q):
        d = 1.0 + q[1] * (n - 1.0) + q[2] * n * (n - 1.0)
        return q[0] * n / d - x, d

    def solve(a, b, mu, free):
        step = np.zeros(3)
        idx = np.flatnonzero(free)
        sub = a[np.ix_(idx, idx)]
        step[idx] = np.linalg.solve(sub + mu * np.diag(np.diag(sub) + 1e-12), -b[idx])
        return step

    r, d = resid(p)
    sse = float(r @ r)
    mu = 1e-3
    for _ in range(iters):
        jac = np.stack([n / d, -p[0] * n * (n - 1.0) / d**2,
                        -p[0] * n * n * (n - 1.0) / d**2], axis=1)
        # scale the columns: lambda ~ 1e2, kappa ~ 1e-4 differ by many decades
        scale = np.sqrt((jac * jac).sum(axis=0))
        scale[scale == 0] = 1.0
        js = jac / scale
        a = js.T @ js
        b = js.T @ r
        improved = False
        for _ in range(30):
            free = np.ones(3, bool)
            for _ in range(3):       # hold the coefficients the step pushes out of bounds
                step = solve(a, b, mu, free) / scale
                out = free & (((p <= lo) & (step < 0)) | ((p >= hi) & (step > 0)))
                if not out.any():
                    break
                free &= ~out
            q = np.clip(p + step, lo, hi)
            rq, dq = resid(q)
            sq = float(rq @ rq)
            if sq < sse:
                improved = sse - sq > 1e-15 * max(sse, 1e-300)
                p, r, d, sse = q, rq, dq, sq
                mu = max(mu / 3.0, 1e-12)
                break
            mu *= 4.0
        if not improved:
            break
    return p


def _sse(n: np.ndarray, x: np.ndarray, lam: float, s: float, k: float) -> float:
    r = lam * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0)) - x
    return float(r @ r)


def fit(n: Sequence[float], x: Sequence[float]) -> UslFit:
    """The USL fitted to throughputs ``x`` at concurrencies ``n`` (see the module
    docstring). ``UslError`` if fewer than ``MIN_POINTS`` distinct N, an N below 1 or
    throughputs that are not positive and finite."""
    n = np.asarray(n, dtype=float)
    x = np.asarray(x, dtype=float)
    if n.shape != x.shape or n.ndim != 1:
        raise UslError("N and X must be two lists of one length")
    if not (np.isfinite(n).all() and np.isfinite(x).all()):
        raise UslError("N and X must be finite numbers")
    if len(np.unique(n)) < MIN_POINTS:
        raise UslError(f"{len(np.unique(n))} distinct concurrency value(s); the fit needs "
                       f"at least {MIN_POINTS}")
    if (n < 1).any():
        raise UslError(f"concurrency {float(n.min()):g} < 1: the USL counts clients from 1")
    if (x < 0).any() or not (x > 0).any():
        raise UslError("throughputs must be >= 0 and not all 0")
    lam, s, k = _sse_grid(n, x)
    lam, s, k = (float(v) for v in _refine(n, x, np.array([lam, s, k])))
    sse = _sse(n, x, lam, s, k)
    # a coefficient the data does not need (1e-19 after the refine) is 0: no peak, not
    # one at N = 1e9
    for which in ("kappa", "sigma"):
        s0, k0 = (s, 0.0) if which == "kappa" else (0.0, k)
        if (s, k) != (s0, k0):
            g = n / (1.0 + s0 * (n - 1.0) + k0 * n * (n - 1.0))
            lam0 = float(g @ x / (g @ g))
            sse0 = _sse(n, x, lam0, s0, k0)
            if sse0 <= sse * (1.0 + 1e-9) + 1e-12 * float(x @ x):
                lam, s, k, sse = lam0, s0, k0, sse0
    sst = float(((x - x.mean()) ** 2).sum())
    bound = tuple(name for name, v in (("sigma", s), ("kappa", k)) if v <= 0.0)
    return UslFit(lam, s, k, int(len(n)), 1.0 - sse / sst if sst > 0 else 1.0,
                  math.sqrt(sse / len(n)), bound)


# -- from the results ---------------------------------------------------------------------
@dataclass(frozen=True)
class Series:
    """One configuration's points and its fit."""

    config: str
    n: tuple[float, ...]
    x: tuple[float, ...]
    fit: UslFit


def _number_column(con, col: str, what: str, sel: str, p: dict) -> None:
    from .query import quote, run_sql

    kind = run_sql(con, f"SELECT typeof({quote(col)}) FROM runs WHERE {sel} AND "
                        f"{quote(col)} IS NOT NULL LIMIT 1", p).rows
    if not kind:
        raise UslError(f"{what}: column {col!r} has no values in these runs")
    if not any(t in kind[0][0] for t in ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL")):
        raise UslError(f"{what}: column {col!r} is not a number ({kind[0][0]})")


def fit_runs(con, experiment: str, x_col: str, metric: str,
             where: str | None = None) -> list[Series]:
    """One ``Series`` per configuration of ``experiment``'s ok runs (the parameters that
    vary besides ``x_col`` and the seed), fitted on (``x_col``, ``metric``)."""
    from .best import _resolve
    from .query import columns, quote, run_sql, varying_params

    cols = columns(con)
    try:
        x_col = _resolve(x_col, cols, "--x")
    except ValueError as ex:
        raise UslError(str(ex)) from None
    if metric not in cols:
        import difflib

        close = difflib.get_close_matches(metric, cols, n=1)
        raise UslError(f"--metric: no column {metric!r} in the results"
                       + (f" (did you mean {close[0]!r}?)" if close else ""))
    sel = "experiment = $experiment AND status = 'ok'" + (f" AND ({where})" if where else "")
    p = {"experiment": experiment}
    _number_column(con, x_col, "--x", sel, p)
    _number_column(con, metric, "--metric", sel, p)
    vary = [c for c in varying_params(con, sel, p, skip=("run.seed", "run.below_valid_scale"))
            if c != x_col]
    label = (" || ' ' || ".join(f"'{c.split('.', 1)[1]}=' || coalesce(CAST({quote(c)} AS "
                                f"VARCHAR), 'null')" for c in vary) or "'(one configuration)'")
    rows = run_sql(con, f"SELECT {label} AS config, CAST({quote(x_col)} AS DOUBLE), "
                        f"CAST({quote(metric)} AS DOUBLE) FROM runs WHERE {sel} AND "
                        f"{quote(x_col)} IS NOT NULL AND {quote(metric)} IS NOT NULL "
                        f"ORDER BY {''.join(quote(c) + ', ' for c in vary)}2, 3", p).rows
    if not rows:
        raise UslError(f"no successful runs of {experiment!r} with {x_col} and {metric}")
    groups: dict[str, list[tuple[float, float]]] = {}
    for config, nv, xv in rows:
        groups.setdefault(config, []).append((nv, xv))
    out = []
    for config, pts in groups.items():
        ns, xs = zip(*pts)
        try:
            f = fit(ns, xs)
        except UslError as ex:
            name = "" if config == "(one configuration)" else f" ({config})"
            raise UslError(f"--x {x_col}: {ex}{name}") from None
        out.append(Series(config, tuple(ns), tuple(xs), f))
    return out


def fit_table(series: Sequence[Series]):
    """The fits as a ``query.Result``: one row per configuration."""
    from .query import Result

    cols = ["config", "points", "lambda", "sigma", "kappa", "peak_n", "peak_x",
            "max_measured_x", "at_n", "r2", "rmse", "at_bound"]
    rows = []
    for s in series:
        f = s.fit
        i = int(np.argmax(s.x))
        rows.append((s.config, f.n_points, f.lambda_, f.sigma, f.kappa, f.peak_n, f.peak_x,
                     s.x[i], s.n[i], f.r2, f.rmse, ", ".join(f.at_bound) or "-"))
    return Result(cols, rows, key=1, optional_from=cols.index("r2"))


def points_table(series: Sequence[Series]):
    """Each point beside the fitted curve: N, measured, fitted, residual (percent)."""
    from .query import Result

    rows = []
    for s in series:
        fitted = predict(s.fit, s.n)
        for nv, xv, fv in zip(s.n, s.x, fitted):
            rows.append((s.config, nv, xv, float(fv), 100.0 * (xv - fv) / fv if fv else None))
    return Result(["config", "n", "measured", "fitted", "residual_pct"], rows, key=1)


def shown(res):
    """``fit_table``'s result for the terminal: sigma and kappa to three significant
    digits (``2.93e-04``; the table's shared decimals would print kappa as 0.0003)."""
    from .query import Result

    idx = [res.columns.index(c) for c in ("sigma", "kappa")]
    rows = [tuple(f"{v:.3g}" if i in idx else v for i, v in enumerate(r)) for r in res.rows]
    return Result(res.columns, rows, res.key, res.optional_from)
