# nxc's Nx.LinAlg eigen- and singular-value decompositions, written in defn
# and compiled into nxc.
#
# lib/Sema/NxSpectral.cpp checks the arguments with Nx's messages, casts them
# to a floating type, splits batches into single matrices and calls these
# functions. The algorithms are the ones Nx evaluates (a parallel Jacobi
# method for eigh; for svd, Halley's iteration for the polar decomposition or
# the Gram matrix's eigendecomposition), with the same operations in the
# same order, so results agree with Nx's to the last bits where the
# operations allow. Dots accumulate in f64 and round once, as
# Nx.BinaryBackend computes them.
defmodule Nxc.Prelude.Spectral do
  import Nx.Defn

  @f32_eps 1.1920929e-07

  # Eigenvalues and eigenvectors of a symmetric float {n, n} matrix by the
  # parallel Jacobi method of Brent and Luk (1985). The matrix, with a zero
  # row and column added when n is odd, is read as h index pairs (k, h + k).
  # Every step rotates all pairs at once, each to zero its off-diagonal
  # entry, then moves the indices one place round a tournament (index 0
  # stays, the others rotate through both halves), so that every two indices
  # are paired within n steps. Sweeps of n steps repeat until the squared
  # off-diagonal norm is at most eps^2 times the squared Frobenius norm, or
  # max_iter sweeps ran. Eigenvalues are sorted by magnitude, largest first,
  # eigenvectors are the columns; entries within eps of zero become zero.
  defn eigh(a, eps, max_iter) do
    n = Nx.axis_size(a, 0)

    if n == 1 do
      {Nx.take_diagonal(a), Nx.fill(a, 1)}
    else
      eigh_jacobi(a, eps, max_iter)
    end
  end

  defnp eigh_jacobi(a, eps, max_iter) do
    n = Nx.axis_size(a, 0)
    h = div(n + 1, 2)
    size = 2 * h
    pad = size - n
    a = if pad > 0, do: Nx.pad(a, 0, [{0, pad, 0}, {0, pad, 0}]), else: a
    index = Nx.iota({size})
    # partner[i]: the other index of i's pair; tournament[i]: the index that
    # moves to place i after a step.
    partner = Nx.remainder(index + h, size)
    tournament =
      Nx.select(
        index == 0,
        0,
        Nx.select(index == 1, h, Nx.select(index < h, index - 1, Nx.select(index == size - 1, h - 1, index + 1)))
      )

    top = index < h
    diagonal = Nx.iota({size, size}, axis: 0) == Nx.iota({size, size}, axis: 1)
    paired = Nx.new_axis(partner, 1) == Nx.iota({1, size}, axis: 1)
    {frobenius, off} = jacobi_norms(a, h)

    {{a, v}, _} =
      while {{a, v = Nx.eye(size, type: Nx.type(a))}, {frobenius, off, sweep = 0}},
            off > eps ** 2 * frobenius and sweep < max_iter do
        {a, v} =
          while {a, v}, _step <- 0..(n - 1)//1 do
            {c, s, t} = jacobi_rotation(a, h)
            tr = Nx.take_diagonal(a, offset: h)
            d = Nx.take_diagonal(a)
            rt = Nx.concatenate([d[0..(h - 1)//1] - t * tr, d[h..-1//1] + t * tr])
            cc = Nx.concatenate([c, c])
            ss = Nx.concatenate([-s, s])
            a = Nx.new_axis(cc, 1) * a + Nx.new_axis(ss, 1) * Nx.take(a, partner, axis: 0)
            a = a * Nx.new_axis(cc, 0) + Nx.take(a, partner, axis: 1) * Nx.new_axis(ss, 0)
            a = Nx.select(diagonal, Nx.new_axis(rt, 1), Nx.select(paired, 0, a))
            a = a |> Nx.take(tournament, axis: 0) |> Nx.take(tournament, axis: 1)
            v = Nx.new_axis(cc, 1) * v + Nx.new_axis(ss, 1) * Nx.take(v, partner, axis: 0)
            {a, Nx.take(v, tournament, axis: 0)}
          end

        {frobenius, off} = jacobi_norms(a, h)
        {{a, v}, {frobenius, off, sweep + 1}}
      end

    w = Nx.take_diagonal(a)[0..(n - 1)//1]
    v = Nx.transpose(v)[[0..(n - 1)//1, 0..(n - 1)//1]]
    order = Nx.argsort(Nx.abs(w), direction: :desc)
    {zero_small(Nx.take(w, order), eps), zero_small(Nx.take(v, order, axis: 1), eps)}
  end

  # The rotation (c, s) that zeroes a[k][h + k] for each pair, with t = s / c
  # the tangent: t is zero where the entry is negligible next to both
  # diagonal entries.
  defnp jacobi_rotation(a, h) do
    d = Nx.take_diagonal(a)
    p = d[0..(h - 1)//1]
    q = d[h..-1//1]
    r = Nx.take_diagonal(a, offset: h)
    zero = r == 0
    tau = Nx.select(zero, 0, (q - p) / (2 * Nx.select(zero, 1, r)))
    root = Nx.sqrt(1 + tau * tau)
    t = 1 / (tau + Nx.select(tau >= 0, root, -root))
    t = Nx.select(Nx.abs(r) <= 1.0e-5 * Nx.min(Nx.abs(q), Nx.abs(p)), Nx.tensor(0, type: Nx.type(a)), t)
    c = 1.0 / Nx.sqrt(1.0 + t * t)
    {c, t * c, t}
  end

  # Squared Frobenius norm and squared norm off the pairs' diagonals, summed
  # over the four h x h blocks as one elementwise sum.
  defnp jacobi_norms(a, h) do
    low = 0..(h - 1)//1
    high = h..(2 * h - 1)//1
    {tl, tr, bl, br} = {a[[low, low]], a[[low, high]], a[[high, low]], a[[high, high]]}
    eye = Nx.eye(h, type: :u8)
    otl = Nx.select(eye, 0, tl)
    obr = Nx.select(eye, 0, br)
    {Nx.sum(tl * tl + tr * tr + bl * bl + br * br), Nx.sum(otl * otl + tr * tr + bl * bl + obr * obr)}
  end

  defnp zero_small(x, eps), do: Nx.select(Nx.abs(x) <= eps, 0, x)

  # eigh's outputs with the gradient for distinct eigenvalues (Giles 2008):
  # a_bar = v (diag(w_bar) + f o (v^T v_bar)) v^T, symmetrized, where
  # f[i][j] = 1 / (w[j] - w[i]) off the diagonal and 0 on it.
  defn eigh_grad(a, w, v) do
    custom_grad({w, v}, [a], fn {dw, dv} ->
      n = Nx.axis_size(v, 0)
      eye = Nx.eye(n, type: Nx.type(v))
      f = 1 / (eye + Nx.new_axis(w, 0) - Nx.new_axis(w, 1)) - eye
      dw = Nx.broadcast(dw, Nx.shape(w))
      inner = Nx.new_axis(dw, 1) * eye + f * Nx.dot(Nx.transpose(v), Nx.broadcast(dv, Nx.shape(v)))
      g = v |> Nx.dot(inner) |> Nx.dot(Nx.transpose(v))
      [(g + Nx.transpose(g)) / 2]
    end)
  end

  # Singular value decomposition of a float {m, n} matrix: {u, s, vt}, s
  # sorted largest first, k = min(m, n) values. A wide matrix is decomposed
  # through its transpose. With full (u {m, m}, vt {n, n}) a tall matrix is
  # reduced to its square triangle by a complete QR, and the square's polar
  # decomposition u h gives s and v from h's eigendecomposition. Without
  # full (u {m, k}, vt {k, n}), s and v come from the eigendecomposition of
  # the Gram matrix and u = a v / s, zero where s is negligible. A zero
  # matrix gives zeros and identities.
  defn svd(a, full, max_iter) do
    {m, n} = Nx.shape(a)
    k = min(m, n)
    {uc, vr} = if full, do: {m, n}, else: {k, k}

    if Nx.all(a == 0) do
      {Nx.eye({m, uc}, type: Nx.type(a)), Nx.broadcast(Nx.tensor(0, type: Nx.type(a)), {k}),
       Nx.eye({vr, n}, type: Nx.type(a))}
    else
      wide = m < n
      x = if wide, do: Nx.transpose(a), else: a
      {u, s, v} = if full, do: svd_complete(x, max_iter), else: svd_gram(x, max_iter)
      if wide, do: {v, s, Nx.transpose(u)}, else: {u, s, Nx.transpose(v)}
    end
  end

  defnp svd_complete(a, max_iter) do
    {m, n} = Nx.shape(a)

    if m > n do
      {q, r} = Nx.LinAlg.qr(a, mode: :complete)
      {u, s, v} = svd_square(Nx.slice_along_axis(r, 0, n, axis: 0), max_iter)
      q_range = Nx.slice_along_axis(q, 0, n, axis: 1)
      null = Nx.slice_along_axis(q, n, m - n, axis: 1)
      {Nx.concatenate([wide_dot(q_range, u), null], axis: 1), s, v}
    else
      svd_square(a, max_iter)
    end
  end

  defnp svd_gram(a, max_iter) do
    n = Nx.axis_size(a, 1)
    {s2, v} = eigh(wide_dot_t(a, a), 1.0e-4, max_iter)
    s = Nx.sqrt(Nx.max(s2, 0))
    order = Nx.argsort(s, direction: :desc)
    s = Nx.take(s, order)
    v = Nx.take(v, order, axis: 1)
    s_inv = Nx.select(s > n * @f32_eps * s[0], 1 / s, Nx.broadcast(0, Nx.shape(s)))
    {wide_dot(a, v) * Nx.new_axis(s_inv, 0), s, v}
  end

  defnp svd_square(a, max_iter) do
    n = Nx.axis_size(a, 0)
    {u, h} = polar(a, max_iter)
    h = (h + Nx.transpose(h)) / 2
    {s, v} = eigh(h, 1.0e-4, max_iter)
    sign = Nx.select(s < 0, -1, 1)
    v = sign * v
    s = sign * s
    order = Nx.argsort(s, direction: :desc)
    s_sorted = Nx.take(s, order)
    v = Nx.take(v, order, axis: 1)
    u = wide_dot(u, v)
    u = Nx.select(s[0] < n * @f32_eps * s_sorted[0], fix_rank_deficient(u), u)
    {u, s_sorted, v}
  end

  # Orthonormal columns for a rank-deficient u: QR's q with its columns
  # signed by r's diagonal (zero where the diagonal is zero).
  defnp fix_rank_deficient(u) do
    {q, r} = Nx.LinAlg.qr(u)
    d = Nx.take_diagonal(r)
    q * Nx.select(d == 0, 0, Nx.select(d < 0, -1, 1))
  end

  # The polar decomposition a = u h of a square matrix by the QR-based
  # dynamically weighted Halley iteration (Nakatsukasa, Bai and Gygi 2010;
  # Nakatsukasa and Higham 2013): u starts as a scaled to norm below 1 and
  # each step applies the rational function with weights (wa, wb, wc)
  # chosen from l, a lower bound of u's smallest singular value, through a
  # QR factorization while wc is large and a Cholesky one after. It stops
  # when l and u settle, or after max_iter steps.
  defnp polar(x, max_iter) do
    # (the norms' sums in f64, rounded once, as Nx.BinaryBackend adds)
    wide = Nx.as_type(x, :f64)
    norm_1 = Nx.as_type(Nx.LinAlg.norm(wide, ord: 1), Nx.type(x))
    norm_inf = Nx.as_type(Nx.LinAlg.norm(wide, ord: :inf), Nx.type(x))
    alpha = Nx.sqrt(norm_1) * Nx.sqrt(norm_inf)
    tol_l = 5 * @f32_eps
    tol_u = Nx.cbrt(tol_l)
    one = Nx.tensor(1, type: :u8)

    {u, _, _, _, _} =
      while {u = x / alpha, l = @f32_eps, step = 1, moving = one, more = one}, moving and more do
        l2 = l * l
        l2 = Nx.select(l2 < @f32_eps, @f32_eps, l2)
        dd = Nx.cbrt(4.0 * (1.0 / l2 - 1.0) / l2)
        sqd = Nx.sqrt(1.0 + dd)
        wa = sqd + Nx.sqrt(8.0 - 4.0 * dd + 8.0 * (2.0 - l2) / (l2 * sqd)) / 2
        wb = (wa - 1.0) * (wa - 1.0) / 4.0
        wc = wa + wb - 1.0
        l = l * (wa + wb * l2) / (1.0 + wc * l2)
        next = if wc > 100, do: halley_qr(u, wa, wb, wc), else: halley_cholesky(u, wa, wb, wc)
        moving = Nx.abs(1.0 - l) > tol_l or Nx.LinAlg.norm(next - u) > tol_u
        {next, l, step + 1, moving, step < max_iter}
      end

    u = 1.5 * u - 0.5 * wide_dot(u, wide_dot_t(u, u))
    h = wide_dot_t(u, x)
    {u, (h + Nx.transpose(h)) / 2}
  end

  defnp halley_qr(u, wa, wb, wc) do
    {m, n} = Nx.shape(u)
    {q, _} = Nx.LinAlg.qr(Nx.concatenate([Nx.sqrt(wc) * u, Nx.eye(n)], axis: 0))
    top = Nx.slice_along_axis(q, 0, m, axis: 0)
    bottom = Nx.slice_along_axis(q, m, n, axis: 0)
    e = wb / wc
    e * u + (wa - e) / Nx.sqrt(wc) * wide_dot(top, Nx.transpose(bottom))
  end

  defnp halley_cholesky(u, wa, wb, wc) do
    n = Nx.axis_size(u, 1)
    y = Nx.LinAlg.cholesky(wc * wide_dot_t(u, u) + Nx.eye(n))
    z = Nx.LinAlg.triangular_solve(y, Nx.transpose(u), left_side: true, lower: true)
    z = Nx.transpose(Nx.LinAlg.triangular_solve(Nx.transpose(y), z, left_side: true, lower: false))
    e = wb / wc
    e * u + (wa - e) * z
  end

  # svd's outputs with their gradient (Townsend 2016, "Differentiating the
  # singular value decomposition"), for a tall or square a; a wide a is
  # differentiated through its transpose. With full matrices, the columns of
  # u beyond k add -u2 du2^T u1 s^-1 vt (Giles 2008, section 3).
  defn svd_grad(a, u, s, vt) do
    custom_grad({u, s, vt}, [a], fn {du, ds, dvt} ->
      du = Nx.broadcast(du, Nx.shape(u))
      ds = Nx.broadcast(ds, Nx.shape(s))
      dvt = Nx.broadcast(dvt, Nx.shape(vt))
      {m, n} = Nx.shape(a)

      if m < n do
        g = svd_grad_tall(Nx.transpose(vt), s, Nx.transpose(u), Nx.transpose(dvt), ds, Nx.transpose(du))
        [Nx.transpose(g)]
      else
        [svd_grad_tall(u, s, vt, du, ds, dvt)]
      end
    end)
  end

  defnp svd_grad_tall(u, s, vt, du, ds, dvt) do
    k = Nx.axis_size(s, 0)
    columns = Nx.axis_size(u, 1)
    u1 = Nx.slice_along_axis(u, 0, k, axis: 1)
    du1 = Nx.slice_along_axis(du, 0, k, axis: 1)
    vt = Nx.slice_along_axis(vt, 0, k, axis: 0)
    dvt = Nx.slice_along_axis(dvt, 0, k, axis: 0)
    eye = Nx.eye(k, type: Nx.type(s))
    s2 = s * s
    f = Nx.select(eye, 0, 1 / (Nx.new_axis(s2, 0) - Nx.new_axis(s2, 1) + eye))
    sm = Nx.new_axis(s, 1) * eye
    s_inv = Nx.new_axis(1 / s, 1) * eye
    ut_du = Nx.dot(Nx.transpose(u1), du1)
    from_u =
      Nx.dot(Nx.dot(u1, f * (ut_du - Nx.dot(Nx.transpose(du1), u1))), sm) +
        Nx.dot(du1 - Nx.dot(u1, ut_du), s_inv)
    from_s = Nx.dot(u1 * Nx.new_axis(ds, 0), vt)
    skew = (Nx.dot(vt, Nx.transpose(dvt)) - Nx.dot(dvt, Nx.transpose(vt))) * f
    dvt_s = Nx.dot(s_inv, dvt)
    from_vt = Nx.dot(u1, Nx.dot(Nx.dot(sm, skew), vt) + dvt_s - Nx.dot(Nx.dot(dvt_s, Nx.transpose(vt)), vt))
    g = Nx.dot(from_u, vt) + from_s + from_vt

    if columns > k do
      u2 = Nx.slice_along_axis(u, k, columns - k, axis: 1)
      du2 = Nx.slice_along_axis(du, k, columns - k, axis: 1)
      g - Nx.dot(Nx.dot(u2, Nx.transpose(du2)), Nx.dot(Nx.dot(u1, s_inv), vt))
    else
      g
    end
  end

  # The pseudo-inverse of a float matrix, v s^+ u^T from the reduced svd,
  # singular values below eps counted as zero; zero for a matrix within eps
  # of zero.
  defn pinv(a, eps, max_iter) do
    {m, n} = Nx.shape(a)

    if Nx.all(Nx.abs(a) <= eps) do
      Nx.broadcast(Nx.tensor(0, type: Nx.type(a)), {n, m})
    else
      {u, s, vt} = svd(a, false, max_iter)
      small = Nx.abs(s) < eps
      s_inv = Nx.select(small, 0, 1 / Nx.select(small, 1, s))
      wide_dot(Nx.transpose(vt), Nx.new_axis(s_inv, 1) * Nx.transpose(u))
    end
  end

  # x . y and x^T . y accumulated in f64, rounded once to x's type.
  defn wide_dot(x, y), do: Nx.as_type(Nx.dot(Nx.as_type(x, :f64), Nx.as_type(y, :f64)), Nx.type(x))

  defnp wide_dot_t(x, y),
    do: Nx.as_type(Nx.dot(Nx.as_type(x, :f64), [0], Nx.as_type(y, :f64), [0]), Nx.type(x))
end
