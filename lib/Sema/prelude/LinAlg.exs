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

  # x . y accumulated in f64 and rounded to like's type once, as
  # Nx.BinaryBackend computes a dot.
  defnp wide_dot(x, y, like) do
    Nx.as_type(Nx.dot(Nx.as_type(x, :f64), Nx.as_type(y, :f64)), Nx.type(like))
  end
end
