# nxc's Nx.LinAlg decompositions, written in defn and compiled into nxc.
#
# lib/Sema/NxLinAlg.cpp checks the arguments (shapes, types, options, with
# Nx's messages), casts them, splits batches into single matrices and calls
# these functions on square matrices. Each follows the arithmetic Nx uses
# (its defn fallbacks, or Nx.BinaryBackend where that is what Nx evaluates),
# so results agree with Nx's to the last bits where the operations allow.
defmodule Nxc.Prelude.LinAlg do
  import Nx.Defn

  # x with a x = b for a lower-triangular a {n, n} and b {n, m}, by forward
  # substitution in b's type: x[i] = (b[i] - a[i][0..i-1] . x[0..i-1]) / a[i][i].
  # The rows of x not solved yet are zero and a's upper part is masked out,
  # so one dot per row does it. A zero on the diagonal gives Inf/NaN.
  defn lower_solve(a, b) do
    n = Nx.axis_size(a, 0)
    m = Nx.axis_size(b, 1)
    cols = Nx.iota({n})

    {_, _, _, x} =
      while {i = 0, a, b, x = Nx.as_type(Nx.broadcast(0, Nx.shape(b)), Nx.type(b))}, i < n do
        row = Nx.select(cols < i, a[i], 0)
        y = (b[i] - Nx.dot(row, x)) / a[[i, i]]
        {i + 1, a, b, Nx.put_slice(x, [i, 0], Nx.reshape(y, {1, m}))}
      end

    x
  end

  # LU with partial pivoting, p a = l u read as Nx does: p's column j marks the
  # row taken j-th. Each step k picks the largest |a[r][k]| for r >= k (the
  # first of equals), swaps it into row k, scales the column below the
  # diagonal by the pivot (unless the pivot is zero) and subtracts the outer
  # product from the trailing block.
  defn lu(a) do
    {m, n} = Nx.shape(a)
    rows = Nx.iota({m})
    cols = Nx.iota({n})

    {_, perm, a} =
      while {k = 0, perm = Nx.iota({m}), a}, k < m do
        magnitude = Nx.select(rows >= k, Nx.abs(a[[.., k]]), Nx.Constants.neg_infinity())
        pivot = Nx.argmax(magnitude)
        swap = Nx.select(rows == k, pivot, Nx.select(rows == pivot, k, rows))
        a = Nx.take(a, swap)
        perm = Nx.take(perm, swap)
        diagonal = a[[k, k]]
        column = a[[.., k]]
        column = Nx.select(rows > k and diagonal != 0, column / diagonal, column)
        a = Nx.put_slice(a, [0, k], Nx.reshape(column, {m, 1}))
        trailing = Nx.reshape(rows > k, {m, 1}) and Nx.reshape(cols > k, {1, n})
        a = a - Nx.select(trailing, Nx.outer(a[[.., k]], a[k]), 0)
        {k + 1, perm, a}
      end

    l = Nx.tril(a, k: -1) + Nx.eye(m)
    u = Nx.triu(a)
    p = Nx.equal(Nx.iota({m, 1}), Nx.reshape(perm, {1, m}))
    {p, l, u}
  end

  # Determinants as Nx computes them: products along the diagonals of the
  # matrix tiled twice for 2x2 and 3x3 (in the input's type, then made
  # floating), and from the LU factors (the permutation's parity) above.
  defn determinant2(t) do
    t = Nx.tile(t, [1, 2])
    (diagonal_product(t, 0) - diagonal_product(t, 1)) * 1.0
  end

  defn determinant3(t) do
    pos = Nx.tile(t, [1, 2])
    neg = Nx.reverse(pos, axes: [1])

    (diagonal_product(pos, 0) + diagonal_product(pos, 1) + diagonal_product(pos, 2) -
       diagonal_product(neg, 0) - diagonal_product(neg, 1) - diagonal_product(neg, 2)) * 1.0
  end

  defnp diagonal_product(t, offset), do: Nx.product(Nx.take_diagonal(t, offset: offset))

  # p: lu's permutation in the input's type; l, u: its factors.
  defn determinant_lu(p, l, u) do
    n = Nx.axis_size(l, 0)
    diagonal = Nx.take_diagonal(l) * Nx.take_diagonal(u)
    singular = Nx.any(diagonal == 0)
    transitions = Nx.dot(p, [1], Nx.iota({n}), [0])
    upper = Nx.iota({n, n}, axis: 0) < Nx.iota({n, n}, axis: 1)
    inversions = Nx.broadcast(transitions, {n, n}, axes: [0]) > Nx.broadcast(transitions, {n, n}, axes: [1])
    parity = Nx.sum(inversions * upper)
    sign = -2 * Nx.remainder(parity, 2) + 1
    Nx.select(singular, 0, sign * Nx.product(diagonal))
  end

  # Cholesky-Banachiewicz, row by row as Nx computes it: l[i][j] is
  # (a[i][j] - l[i][0..j-1] . l[j][0..j-1]) / (l[j][j] + eps) below the
  # diagonal and the square root of a[i][i] - |l[i][0..i-1]|^2 on it; entries
  # within eps of zero become zero.
  defn cholesky(a) do
    l = cholesky_matrix(a)

    # Nx's gradient: l^-H phi l^-1 with phi the lower triangle of l^H tril(g),
    # its diagonal halved.
    custom_grad(l, [a], fn g ->
      n = Nx.axis_size(l, 0)
      num = Nx.transpose(Nx.dot(Nx.tril(g), [0], l, [0]))
      phi = Nx.tril(num / (Nx.eye(n) + 1))
      bm = Nx.LinAlg.triangular_solve(l, phi, transform_a: :transpose)
      [Nx.LinAlg.triangular_solve(l, bm, left_side: false)]
    end)
  end

  defnp cholesky_matrix(a) do
    n = Nx.axis_size(a, 0)
    eps = 1.0e-10
    cols = Nx.iota({n})

    {_, _, l} =
      while {i = 0, a, l = Nx.multiply(0.0, a)}, i < n do
        {_, _, _, l} =
          while {j = 0, i, a, l}, j <= i do
            head = Nx.select(cols < j, l[i], 0)
            on = Nx.sqrt(a[[i, i]] - wide_dot(head, l[i], a))
            below = (a[[i, j]] - wide_dot(head, l[j], a)) / (l[[j, j]] + eps)
            value = Nx.select(i == j, on, below)
            {j + 1, i, a, Nx.put_slice(l, [i, j], Nx.reshape(value, {1, 1}))}
          end

        {i + 1, a, l}
      end

    Nx.select(Nx.abs(l) <= eps, 0, l)
  end

  # Householder QR of a {m, n} with m >= n (a wide matrix arrives padded with
  # zero rows), reflecting columns 0..last: q {m, m}, r {m, n}, entries within
  # eps of zero set to zero. Each step reflects x, the column below the
  # diagonal, onto the axis with v = x - |x| e_i computed without
  # cancellation, scaled so that v[i] = 1, and skips columns already zero.
  defn qr(a, last, eps) do
    m = Nx.axis_size(a, 0)
    rows = Nx.iota({m})

    {q, r} =
      while {q = Nx.eye(m, type: Nx.type(a)), r = a}, i <- 0..last//1 do
        x = Nx.select(rows < i, 0, r[[.., i]])
        norm_sq = wide_dot(x, x, x)
        norm = Nx.sqrt(norm_sq)
        x_i = x[i]
        tail_sq = norm_sq - Nx.abs(x_i) ** 2
        v_i = Nx.select(x_i <= 0, x_i - norm, -tail_sq / (x_i + norm))
        zero = tail_sq < eps
        v = Nx.put_slice(x, [i], Nx.select(zero, Nx.as_type(Nx.tensor([1]), Nx.type(x)), Nx.reshape(v_i, {1})))
        v = v / Nx.select(zero, 1, v_i)
        scale = Nx.select(zero, 0, 2 / Nx.select(zero, 1, wide_dot(v, v, v)))
        v_r = wide_dot(v, r, r)
        r = r - scale * Nx.dot(Nx.new_axis(v, 1), Nx.new_axis(v_r, 0))
        q_v = wide_dot(q, v, q)
        q = q - scale * Nx.outer(q_v, v)
        {q, r}
      end

    {Nx.select(Nx.abs(q) <= eps, 0, q), Nx.select(Nx.abs(r) <= eps, 0, r)}
  end

  # x = triangular_solve(a, b) with Nx's gradient: for a x = b,
  # a_bar = -a^-H x_bar x^H and b_bar = a^-H x_bar; for x a = b,
  # a_bar = -x^H x_bar a^-H and b_bar = x_bar a^-H; a_bar keeps a's triangle.
  # lower, left_side and transpose are compile-time booleans.
  defn triangular_solve_grad(a, b, x, lower, left_side, transpose) do
    custom_grad(x, [a, b], fn g ->
      a_t = if transpose, do: Nx.transpose(a), else: a
      a_h = Nx.transpose(a_t)
      a_h_lower = if transpose, do: lower, else: if(lower, do: false, else: true)
      n = Nx.axis_size(a, 0)
      inv_h = Nx.LinAlg.triangular_solve(a_h, Nx.eye(n, type: Nx.type(a_h)), lower: a_h_lower)
      vector = Nx.rank(b) == 1
      axis = if left_side, do: 1, else: 0
      x = if vector, do: Nx.new_axis(x, axis), else: x
      g = if vector, do: Nx.new_axis(g, axis), else: g

      {da, db} =
        if left_side do
          {Nx.negate(Nx.dot(inv_h, Nx.dot(g, Nx.transpose(x)))), Nx.dot(inv_h, g)}
        else
          {Nx.negate(Nx.dot(Nx.dot(Nx.transpose(x), g), inv_h)), Nx.dot(g, inv_h)}
        end

      da = if transpose, do: Nx.transpose(da), else: da
      da = if lower, do: Nx.tril(da), else: Nx.triu(da)
      db = if vector, do: Nx.squeeze(db, axes: [axis]), else: db
      [da, db]
    end)
  end

  # lu with the gradient of arXiv:2009.10071, equation 3, for a = p l u:
  # a_bar = p l^-H (tril(l^H l_bar, -1) + triu(u_bar u^H)) u^-H. (Nx's lu_grad
  # multiplies by p^T, which is the same only when p is its own inverse; with
  # Nx's p, a = p l u, finite differences agree with p.)
  defn lu_grad(a, p, l, u) do
    custom_grad({p, l, u}, [a], fn {_dp, dl, du} ->
      n = Nx.axis_size(l, 0)
      eye = Nx.eye(n, type: Nx.type(l))
      lt_inv = Nx.LinAlg.triangular_solve(Nx.transpose(l), eye, lower: false)
      ut_inv = Nx.LinAlg.triangular_solve(Nx.transpose(u), eye, lower: true)
      df = Nx.tril(Nx.dot(Nx.transpose(l), dl), k: -1) + Nx.triu(Nx.dot(du, Nx.transpose(u)))
      [p |> Nx.dot(lt_inv) |> Nx.dot(df) |> Nx.dot(ut_inv)]
    end)
  end

  # invert with Nx's gradient: -inv^T g inv^T.
  defn invert_grad(a, inv) do
    custom_grad(inv, [a], fn g ->
      inv_t = Nx.transpose(inv)
      [Nx.negate(inv_t) |> Nx.dot(g) |> Nx.dot(inv_t)]
    end)
  end

  # qr's outputs with Nx's gradient (arXiv:2009.10071: equation 3 for square
  # and tall r, proposition 2 for wide r = [u | v]).
  defn qr_grad(a, q, r) do
    custom_grad({q, r}, [a], fn {dq, dr} ->
      {rows, cols} = Nx.shape(r)

      if rows < cols do
        m = Nx.axis_size(q, 0)
        u = Nx.slice_along_axis(r, 0, m, axis: 1)
        du = Nx.slice_along_axis(dr, 0, m, axis: 1)
        v = Nx.slice_along_axis(r, m, cols - m, axis: 1)
        dv = Nx.slice_along_axis(dr, m, cols - m, axis: 1)
        dx = qr_grad_square(q, u, dq + Nx.dot(Nx.dot(q, v), [1], dv, [1]), du)
        [Nx.concatenate([dx, Nx.dot(q, dv)], axis: 1)]
      else
        [qr_grad_square(q, r, dq, dr)]
      end
    end)
  end

  defnp qr_grad_square(q, r, dq, dr) do
    {rows, cols} = Nx.shape(r)
    k = min(rows, cols)
    r_sq = r |> Nx.slice_along_axis(0, k, axis: 0) |> Nx.slice_along_axis(0, k, axis: 1)
    r_inv = Nx.LinAlg.triangular_solve(r_sq, Nx.eye(k, type: Nx.type(r)), lower: false)
    m = Nx.dot(r, [1], dr, [1]) - Nx.dot(dq, [0], q, [0])
    m_ltu = Nx.tril(m) + Nx.transpose(Nx.tril(m, k: -1))
    dq_q_m = dq + Nx.dot(q, m_ltu)
    dq_q_m = Nx.slice_along_axis(dq_q_m, 0, k, axis: 1)
    Nx.dot(dq_q_m, [1], r_inv, [1])
  end

  # x . y accumulated in f64 and rounded to like's type once, as
  # Nx.BinaryBackend computes a dot.
  defnp wide_dot(x, y, like) do
    Nx.as_type(Nx.dot(Nx.as_type(x, :f64), Nx.as_type(y, :f64)), Nx.type(like))
  end
end
