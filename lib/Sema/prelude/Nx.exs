# Parts of nxc's Nx library written in defn and compiled into nxc (see
# lib/Sema/NxGenericReductions.cpp for the functions that call these).
defmodule Nxc.Prelude.Nx do
  import Nx.Defn

  # Nx.reduce's fold: acc = fun.(x[i], acc) for i over the first axis, in
  # order (as Nx.BinaryBackend visits elements), acc of x's other axes; each
  # step keeps the accumulator's type.
  defn fold(x, acc, fun) do
    n = Nx.axis_size(x, 0)

    {_, acc, _} =
      while {i = 0, acc, x}, i < n do
        {i + 1, Nx.as_type(fun.(x[i], acc), Nx.type(acc)), x}
      end

    acc
  end

  # Nx.mode of each row of x {rows, n} (n >= 2), as {rows, 1}: the rows
  # sorted, each run of equal values numbered (a running count of the places
  # where the value changes), every run's length counted, and the value of
  # the first longest run taken: among values equally frequent, the
  # smallest.
  defn mode_rows(x) do
    {rows, n} = Nx.shape(x)
    sorted = Nx.sort(x, axis: 1)

    changes =
      Nx.not_equal(Nx.slice_along_axis(sorted, 1, n - 1, axis: 1), Nx.slice_along_axis(sorted, 0, n - 1, axis: 1))

    run = Nx.cumulative_sum(Nx.concatenate([Nx.broadcast(0, {rows, 1}), changes], axis: 1), axis: 1)
    row = Nx.iota({rows, n}, axis: 0)
    at = Nx.stack([Nx.reshape(row, {rows * n}), Nx.reshape(run, {rows * n})], axis: 1)
    lengths = Nx.indexed_add(Nx.broadcast(0, {rows, n}), at, Nx.broadcast(1, {rows * n}))
    longest = Nx.argmax(lengths, axis: 1, keep_axis: true)
    first = Nx.argmax(Nx.equal(run, longest), axis: 1, keep_axis: true)
    Nx.take_along_axis(sorted, first, axis: 1)
  end

  # Nx.Random.choice's four ways, as Nx draws them (nxc checks the options
  # with Nx's messages and flattens the tensor when no axis is given; `n`,
  # `inputs` and `axis` are integers at compile time). With replacement:
  # uniform indices, or inverse-CDF sampling of `p`; without: the first `n`
  # of a shuffle, or of the order of Gumbel-perturbed log-probabilities.
  defn choice_replace(key, t, inputs, n, axis) do
    {idx, key} = Nx.Random.randint(key, 0, inputs, shape: {n}, type: :u32)
    {Nx.take(t, idx, axis: axis), key}
  end

  defn choice_shuffle(key, t, n, axis) do
    {shuffled, key} = Nx.Random.shuffle(key, t, axis: axis)
    {Nx.slice_along_axis(shuffled, 0, n, axis: axis), key}
  end

  defn choice_p_replace(key, t, p, n, axis) do
    c = Nx.cumulative_sum(p)
    {u, key} = Nx.Random.uniform(key, shape: {n}, type: Nx.type(c))
    r = c[-1] * (1 - u)
    idx = Nx.argmin(Nx.new_axis(c, 0) <= Nx.new_axis(r, 1), tie_break: :low, axis: 1)
    {Nx.take(t, idx, axis: axis), key}
  end

  defn choice_p_gumbel(key, t, p, n, axis) do
    {g, key} = Nx.Random.gumbel(key, shape: {Nx.size(p)}, type: Nx.type(p))
    g = -g - Nx.log(p)
    idx = g |> Nx.argsort() |> Nx.slice_along_axis(0, n, axis: 0)
    {Nx.take(t, idx, axis: axis), key}
  end
end
