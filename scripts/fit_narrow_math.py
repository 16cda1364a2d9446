#!/usr/bin/python3
"""Coefficients of the f64 polynomials behind nxc's f32 atan family, pow, sinh and erfc
(lib/Conversion/NarrowMath.cpp): least-squares fits at Chebyshev nodes of the
interval, against values computed to 40 digits with Python's decimal module,
printed highest power first with the largest relative error of the fit.

    /usr/bin/python3 scripts/fit_narrow_math.py
"""
from decimal import Decimal, getcontext, localcontext

getcontext().prec = 40


def series_atan_tail(v):
    # (atan(u) - u) / (u v), v = u^2: sum over k >= 1 of (-1)^k v^(k-1) / (2k + 1)
    total, term, k = Decimal(0), Decimal(1), 1
    while True:
        t = term / (2 * k + 1) * (-1 if k % 2 else 1)
        total += t
        if abs(t) < Decimal(10) ** -38:
            return total
        term *= v
        k += 1


def series_log2_ratio(v):
    # log2(m) / s with s = (m - 1) / (m + 1), v = s^2: (2 / ln 2) sum over k >= 0 of v^k / (2k + 1)
    total, term, k = Decimal(0), Decimal(1), 0
    while True:
        t = term / (2 * k + 1)
        total += t
        if t < Decimal(10) ** -38:
            return 2 * total / Decimal(2).ln()
        term *= v
        k += 1


def series_sinh_tail(v):
    # (sinh(x) / x - 1) / v, v = x^2: sum over k >= 1 of v^(k-1) / (2k + 1)!
    total, term, k = Decimal(0), Decimal(1) / 6, 1
    while term > Decimal(10) ** -40:
        total += term
        term = term * v / ((2 * k + 2) * (2 * k + 3))
        k += 1
    return total


PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899"
             "862803482534211706798214808651328230664709384460955058223172535940812848111745")
SQRT_PI = PI.sqrt()


def erf_over_x(v):
    # erf(x) / x, v = x^2: 2/sqrt(pi) sum over n of (-1)^n v^n / (n! (2n + 1))
    total, term, n = Decimal(0), Decimal(1), 0
    while abs(term) > Decimal(10) ** -40:
        total += term / (2 * n + 1)
        n += 1
        term = -term * v / n
    return 2 * total / SQRT_PI


ERFC_SHIFT, ERFC_LO, ERFC_HI = 3, Decimal("0.5"), Decimal(11)
ERFC_T0, ERFC_T1 = 1 / (ERFC_HI + ERFC_SHIFT), 1 / (ERFC_LO + ERFC_SHIFT)


def erfc_scaled_in_w(w):
    # erfc(x) e^(x^2) at t = 1 / (x + 3) = t0 + (w + 1)(t1 - t0) / 2, w in [-1, 1]:
    # (e^(x^2) - 2/sqrt(pi) sum 2^n x^(2n+1) / (2n+1)!!), in 110 digits (it cancels).
    with localcontext() as ctx:
        ctx.prec = 110
        t = ERFC_T0 + (Decimal(w) + 1) * (ERFC_T1 - ERFC_T0) / 2
        x = 1 / t - ERFC_SHIFT
        total, term, n = Decimal(0), x, 0
        while term > total * Decimal(10) ** -105:
            total += term
            n += 1
            term = term * 2 * x * x / (2 * n + 1)
        r = (x * x).exp() - 2 * total / PI.sqrt()
    return +r


def exp2(f):
    return (f * Decimal(2).ln()).exp()


def fit(name, func, lo, hi, degree):
    """Chebyshev projection at n nodes (a near-minimax fit), in 40-digit
    arithmetic, then monomials in x, rounded to f64 once."""
    n = 200
    lo_d, hi_d = Decimal(lo), Decimal(hi)
    pi = Decimal("3.141592653589793238462643383279502884197")
    theta = [pi * (Decimal(j) + Decimal("0.5")) / n for j in range(n)]

    def cos(t):  # Taylor series, |t| <= pi * degree
        t = t % (2 * pi)
        total, term, k = Decimal(0), Decimal(1), 0
        while abs(term) > Decimal(10) ** -45:
            total += term
            term = -term * t * t / ((2 * k + 1) * (2 * k + 2))
            k += 1
        return total

    w = [cos(t) for t in theta]
    y = [func(lo_d + (wj + 1) * (hi_d - lo_d) / 2) for wj in w]
    cheb = []
    for k in range(degree + 1):
        ck = 2 * sum(yj * cos(k * t) for yj, t in zip(y, theta)) / n
        cheb.append(ck / 2 if k == 0 else ck)
    # T_k(w) as monomials in w, then w = a x + b.
    tk = [[Decimal(1)], [Decimal(0), Decimal(1)]]
    while len(tk) <= degree:
        prev, cur = tk[-2], tk[-1]
        nxt = [Decimal(0)] + [2 * c for c in cur]
        for i, c in enumerate(prev):
            nxt[i] -= c
        tk.append(nxt)
    in_w = [Decimal(0)] * (degree + 1)
    for k, ck in enumerate(cheb):
        for i, c in enumerate(tk[k]):
            in_w[i] += ck * c
    a, b = 2 / (hi_d - lo_d), -(lo_d + hi_d) / (hi_d - lo_d)
    coeffs = [Decimal(0)] * (degree + 1)
    power = [Decimal(1)]  # (a x + b)^i
    for i, c in enumerate(in_w):
        for j, pj in enumerate(power):
            coeffs[j] += c * pj
        power = [b * power[0]] + [b * power[j] + a * power[j - 1] for j in range(1, len(power))] + [a * power[-1]]
    coeffs = [float(c) for c in coeffs]
    worst = 0.0
    for i in range(2001):
        t = Decimal(float(lo_d + (hi_d - lo_d) * i / 2000))
        exact = func(t)
        got = Decimal(0)
        for c in coeffs[::-1]:
            got = got * t + Decimal(c)
        worst = max(worst, float(abs((got - exact) / exact)))
    print(f"{name} on [{lo:.17g}, {hi:.17g}], degree {degree}: max relative error {worst:.2e}")
    print("  {" + ", ".join(repr(c) for c in coeffs[::-1]) + "}")


if __name__ == "__main__":
    t8 = (2 ** 0.5 - 1) ** 2
    fit("atan: (atan(u) - u) / (u v), v = u^2", series_atan_tail, 0.0, t8, 9)
    s2 = ((2 ** 0.5 - 1) / (2 ** 0.5 + 1)) ** 2
    fit("log2(m) / s, v = s^2", series_log2_ratio, 0.0, s2, 6)
    fit("2^f", exp2, -0.5, 0.5, 10)
    fit("sinh: (sinh(x) / x - 1) / v, v = x^2", series_sinh_tail, 0.0, 0.25, 4)
    fit("erf(x) / x, v = x^2", erf_over_x, 0.0, 0.25, 7)
    fit("erfc(x) e^(x^2), x in [0.5, 11], in w (t = 1 / (x + 3) onto [-1, 1])", erfc_scaled_in_w, -1.0, 1.0, 16)
