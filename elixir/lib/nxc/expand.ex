defmodule Nxc.Expand do
  @moduledoc false
  # Nx ops that nxc's graph format has no node for, written with Nx ops it
  # has. Each function takes and returns expressions (Nx.Defn.Expr
  # tensors): calling Nx on them builds more expression, which Nxc.Graph
  # then writes as it writes the user's.

  @doc """
  Nx.BinaryBackend's window_scatter_max/min: `tensor` padded with
  `init_value`; in each window the element chosen is the last one that is
  `>=` (max) or `<=` (min) all before it; the source value of that window
  is added to `init_value` at the chosen element, unless it lies in the
  padding. `out` is the result's template.
  """
  def window_scatter(out, tensor, source, init_value, window_dims, opts, max?) do
    rank = tuple_size(tensor.shape)
    padding = opts[:padding] || List.duplicate({0, 0}, rank)
    strides = opts[:strides] || List.duplicate(1, rank)
    windows = Tuple.to_list(window_dims)
    grid = Tuple.to_list(source.shape)

    init = Nx.as_type(init_value, out.type)
    padded = Nx.pad(Nx.as_type(tensor, out.type), init, Enum.map(padding, fn {lo, hi} -> {lo, hi, 0} end))

    # The value at each window position k (row-major over the window) of
    # every window, stacked along a last axis: the choice is its argmax
    # (argmin) with ties to the last, as the scan above.
    offsets = window_offsets(windows)

    candidates =
      Enum.map(offsets, fn offset ->
        lengths = Enum.zip_with(grid, strides, fn g, s -> (g - 1) * s + 1 end)
        Nx.slice(padded, offset, lengths, strides: strides)
      end)

    stacked = Nx.stack(candidates, axis: rank)
    choice = if max?, do: Nx.argmax(stacked, axis: rank, tie_break: :high), else: Nx.argmin(stacked, axis: rank, tie_break: :high)

    # The chosen element's coordinates in the tensor (before padding).
    {coords, _} =
      windows
      |> Enum.with_index()
      |> Enum.map_reduce(Enum.product(windows), fn {w, d}, span ->
        span = div(span, w)
        offset = choice |> Nx.quotient(span) |> Nx.remainder(w)
        anchor = Nx.multiply(Nx.iota(source.shape, axis: d, type: :s64, backend: Nx.Defn.Expr), Enum.at(strides, d))
        {Nx.subtract(Nx.add(anchor, offset), elem(Enum.at(padding, d), 0)), span}
      end)

    inside =
      coords
      |> Enum.with_index()
      |> Enum.map(fn {c, d} -> Nx.logical_and(Nx.greater_equal(c, 0), Nx.less(c, elem(tensor.shape, d))) end)
      |> Enum.reduce(&Nx.logical_and/2)

    # Windows that chose padding add nothing (at a clamped place).
    count = Nx.size(source.shape)

    indices =
      coords
      |> Enum.with_index()
      |> Enum.map(fn {c, d} -> c |> Nx.clip(0, elem(tensor.shape, d) - 1) |> Nx.reshape({count, 1}) end)
      |> Nx.concatenate(axis: 1)

    updates = Nx.select(inside, Nx.as_type(source, out.type), Nx.tensor(0, type: out.type)) |> Nx.reshape({count})
    Nx.indexed_add(Nx.broadcast(init, tensor.shape), indices, updates)
  end

  defp window_offsets([]), do: [[]]
  defp window_offsets([w | rest]), do: for(i <- 0..(w - 1), tail <- window_offsets(rest), do: [i | tail])

  # A reduction with a function of the user's is unrolled, one application
  # per element folded: at most this many.
  @max_folded 4096

  @unary ~w(exp expm1 log log1p sigmoid cos sin tan cosh sinh tanh acosh asinh atanh sqrt rsqrt cbrt
            negate sign abs bitwise_not population_count count_leading_zeros floor ceil round
            erf erfc erf_inv acos asin atan is_nan is_infinity)a
  @binary ~w(add subtract multiply divide pow remainder atan2 max min quotient
             bitwise_and bitwise_or bitwise_xor left_shift right_shift
             equal not_equal greater less less_equal greater_equal logical_and logical_or logical_xor)a

  @doc """
  Nx.reduce with a function of the user's (`fun`, the scalar `:fun`
  expression Nx traced), as Nx.BinaryBackend computes it: for each result
  element, `acc` folded over the reduced elements in row-major order,
  `acc = fun.(x, acc)`.
  """
  def reduce(out, tensor, acc, opts, fun) do
    rank = tuple_size(tensor.shape)
    axes = opts[:axes] || Enum.to_list(0..(rank - 1)//1)
    kept = Enum.reject(0..(rank - 1)//1, &(&1 in axes))
    kept_shape = Enum.map(kept, &elem(tensor.shape, &1))
    count = axes |> Enum.map(&elem(tensor.shape, &1)) |> Enum.product()
    folded!(count, "Nx.reduce")

    grouped =
      tensor
      |> Nx.transpose(axes: kept ++ Enum.sort(axes))
      |> Nx.reshape(List.to_tuple(kept_shape ++ [count]))

    init = Nx.broadcast(Nx.as_type(acc, out.type), List.to_tuple(kept_shape))

    result =
      Enum.reduce(0..(count - 1)//1, init, fn k, acc ->
        x = grouped |> Nx.slice_along_axis(k, 1, axis: length(kept_shape)) |> Nx.reshape(List.to_tuple(kept_shape))
        apply_fun(fun, [x, acc], out.type)
      end)

    Nx.reshape(result, out.shape)
  end

  @doc """
  Nx.window_reduce with a function of the user's, as Nx.BinaryBackend: the
  tensor padded with `acc`, and in each window `acc` folded over the
  window's elements in row-major order.
  """
  def window_reduce(out, tensor, acc, window_dims, opts, fun) do
    rank = tuple_size(tensor.shape)
    windows = Tuple.to_list(window_dims)
    padding = opts[:padding] || List.duplicate({0, 0}, rank)
    strides = opts[:strides] || List.duplicate(1, rank)
    dilations = opts[:window_dilations] || List.duplicate(1, rank)
    folded!(Enum.product(windows), "Nx.window_reduce")
    init = Nx.as_type(acc, out.type)
    padded = Nx.pad(Nx.as_type(tensor, out.type), init, Enum.map(padding, fn {lo, hi} -> {lo, hi, 0} end))
    grid = Tuple.to_list(out.shape)

    Enum.reduce(window_offsets(windows), Nx.broadcast(init, out.shape), fn offset, acc ->
      starts = Enum.zip_with(offset, dilations, &(&1 * &2))
      lengths = Enum.zip_with(grid, strides, fn g, s -> (g - 1) * s + 1 end)
      x = Nx.slice(padded, starts, lengths, strides: strides)
      apply_fun(fun, [x, acc], out.type)
    end)
  end

  defp folded!(count, what) do
    if count > @max_folded,
      do: raise(Nxc.UnsupportedError, "#{what} with a function of its own over more than #{@max_folded} elements")
  end

  # The body of a `:fun` expression (a scalar function Nx traced) rebuilt on
  # `args`, tensors of any shape, with Nx's functions: element-wise ops
  # broadcast as they do on scalars.
  defp apply_fun(%Nx.Tensor{data: %Nx.Defn.Expr{op: :fun, args: [params, body, _]}}, args, type) do
    bound = Map.new(Enum.zip(params, args), fn {p, a} -> {p.data.id, a} end)
    {result, _} = rebuild(body, bound)
    Nx.as_type(result, type)
  end

  defp rebuild(%Nx.Tensor{data: %Nx.Defn.Expr{id: id, op: op, args: args}} = t, cache) do
    case cache do
      %{^id => value} ->
        {value, cache}

      _ ->
        {value, cache} =
          case {op, args} do
            {:constant, [number]} ->
              {Nx.tensor(number, type: t.type), cache}

            {:tensor, [tensor]} ->
              {tensor, cache}

            {:metadata, [inner, _]} ->
              rebuild(inner, cache)

            {op, [x]} when op in @unary ->
              {x, cache} = rebuild(x, cache)
              {apply(Nx, op, [x]), cache}

            {op, [x, y]} when op in @binary ->
              {x, cache} = rebuild(x, cache)
              {y, cache} = rebuild(y, cache)
              {apply(Nx, op, [x, y]), cache}

            {:as_type, [x]} ->
              {x, cache} = rebuild(x, cache)
              {Nx.as_type(x, t.type), cache}

            {:select, [p, a, b]} ->
              {p, cache} = rebuild(p, cache)
              {a, cache} = rebuild(a, cache)
              {b, cache} = rebuild(b, cache)
              {Nx.select(p, a, b), cache}

            {op, _} ->
              raise Nxc.UnsupportedError, "Nx op #{inspect(op)} inside the function of a reduce"
          end

        {value, Map.put(cache, id, value)}
    end
  end

  @doc """
  Nx.conv with `batch_group_size: g` (g > 1), as XLA defines it: the input's
  batch and the kernel's output features cut into g groups, group i of the
  one convolved with group i of the other, the results side by side along
  the output's features. Nx's gradient of a feature-grouped convolution
  makes these.
  """
  def conv_batch_groups(out, x, k, opts) do
    g = opts[:batch_group_size]
    rank = tuple_size(x.shape)
    identity = Enum.to_list(0..(rank - 1))
    batch_axis = Enum.at(opts[:input_permutation] || identity, 0)
    kernel_axis = Enum.at(opts[:kernel_permutation] || identity, 0)
    feature_axis = Enum.at(opts[:output_permutation] || identity, 1)
    n = div(elem(x.shape, batch_axis), g)
    o = div(elem(k.shape, kernel_axis), g)
    single = Keyword.put(opts, :batch_group_size, 1)

    0..(g - 1)
    |> Enum.map(fn i ->
      Nx.conv(Nx.slice_along_axis(x, i * n, n, axis: batch_axis), Nx.slice_along_axis(k, i * o, o, axis: kernel_axis), single)
    end)
    |> Nx.concatenate(axis: feature_axis)
    |> Nx.as_type(out.type)
  end

  @doc """
  indexed_add/indexed_put with `axes:` a subset of the target's axes, as
  the same op over every axis: each update row spreads over the axes not
  indexed.
  """
  def indexed_on_axes(op, target, indices, updates, axes) do
    rank = tuple_size(target.shape)
    others = Enum.reject(0..(rank - 1), &(&1 in axes))
    n = elem(indices.shape, 0)
    rest = Enum.map(others, &elem(target.shape, &1))
    full = List.to_tuple([n | rest])
    count = Nx.size(full)

    columns =
      Enum.map(0..(rank - 1), fn axis ->
        case Enum.find_index(axes, &(&1 == axis)) do
          nil ->
            Nx.iota(full, axis: 1 + Enum.find_index(others, &(&1 == axis)), type: indices.type, backend: Nx.Defn.Expr)

          k ->
            indices
            |> Nx.slice_along_axis(k, 1, axis: 1)
            |> Nx.reshape(List.to_tuple([n | Enum.map(rest, fn _ -> 1 end)]))
            |> Nx.broadcast(full)
        end
        |> Nx.reshape({count, 1})
      end)

    all = Nx.concatenate(columns, axis: 1)
    flat = Nx.reshape(updates, {count})

    case op do
      :indexed_add -> Nx.indexed_add(target, all, flat)
      :indexed_put -> Nx.indexed_put(target, all, flat)
    end
  end

  @doc """
  Nx.fft/ifft along `opts[:axis]` to `opts[:length]` points, as nxc's own
  front end computes them (Nx.BinaryBackend's values): the parts in f64, the
  length as 2^p * m with m odd, a DFT of m points by the matrix of Nx's
  twiddles on each subsequence x[r::2^p], then p radix-2 stages pairing the
  subsequences as Nx's recursion does; parts of at most `opts[:eps]` set to
  zero, rounded once to the result's type. The inverse conjugates before
  and after and divides by the length.
  """
  def dft(out, tensor, opts, inverse?) do
    axis = opts[:axis]
    n = opts[:length]
    rank = tuple_size(tensor.shape)
    last = rank - 1
    perm = (Enum.to_list(0..last) -- [axis]) ++ [axis]
    moved = if axis == last, do: tensor, else: Nx.transpose(tensor, axes: perm)
    z = Nx.as_type(moved, out.type)
    have = elem(moved.shape, last)

    fit = fn part ->
      part = Nx.as_type(part, :f64)

      cond do
        n < have -> Nx.slice_along_axis(part, 0, n, axis: last)
        n > have -> Nx.pad(part, 0.0, List.duplicate({0, 0, 0}, last) ++ [{0, n - have, 0}])
        true -> part
      end
    end

    # The BEAM's negation, 0 - x, as Complex.conjugate computes it.
    negate = fn x -> Nx.subtract(0.0, x) end
    re = fit.(Nx.real(z))
    im = if inverse?, do: negate.(fit.(Nx.imag(z))), else: fit.(Nx.imag(z))
    {re, im} = fft_parts(re, im, n)
    {re, im} = if inverse?, do: {Nx.divide(re, n), Nx.divide(negate.(im), n)}, else: {re, im}

    {_, bits} = out.type
    part_type = {:f, div(bits, 2)}
    clean = fn x -> Nx.select(Nx.less_equal(Nx.abs(x), opts[:eps]), 0.0, x) |> Nx.as_type(part_type) end
    result = Nx.complex(clean.(re), clean.(im))
    back = Enum.map(0..last, fn p -> Enum.find_index(perm, &(&1 == p)) end)
    if axis == last, do: result, else: Nx.transpose(result, axes: back)
  end

  defp fft_parts(re, im, n) do
    p = trailing_zeros(n)
    m = Bitwise.bsr(n, p)
    rows = Bitwise.bsl(1, p)

    if m > 4096 do
      raise Nxc.UnsupportedError,
            "a transform of #{n} points (2^#{p} transforms of #{m}: an odd factor above 4096; pad with length: :power_of_two)"
    end

    lead = re.shape |> Tuple.to_list() |> Enum.drop(-1)
    rank = length(lead) + 2
    swap = Enum.to_list(0..(rank - 3)//1) ++ [rank - 1, rank - 2]
    split = fn x -> x |> Nx.reshape(List.to_tuple(lead ++ [m, rows])) |> Nx.transpose(axes: swap) end
    {re, im} = {split.(re), split.(im)}

    {re, im} =
      if m > 1 do
        angle = fn j, k -> -2 * :math.pi() / m * k * j end
        c = Nx.tensor(for(j <- 0..(m - 1), do: for(k <- 0..(m - 1), do: if(k == 0, do: 1.0, else: :math.cos(angle.(j, k))))), type: :f64)
        s = Nx.tensor(for(j <- 0..(m - 1), do: for(k <- 0..(m - 1), do: if(k == 0, do: 0.0, else: :math.sin(angle.(j, k))))), type: :f64)
        {Nx.subtract(Nx.dot(re, c), Nx.dot(im, s)), Nx.add(Nx.dot(re, s), Nx.dot(im, c))}
      else
        {re, im}
      end

    {re, im, _, _} =
      Enum.reduce_while(Stream.cycle([:stage]), {re, im, rows, m}, fn _, {re, im, count, len} ->
        if count == 1 do
          {:halt, {re, im, count, len}}
        else
          half = div(count, 2)
          wr = Nx.tensor(for(k <- 0..(len - 1), do: :math.cos(-2 * :math.pi() * k / (2 * len))), type: :f64)
          wi = Nx.tensor(for(k <- 0..(len - 1), do: :math.sin(-2 * :math.pi() * k / (2 * len))), type: :f64)
          rows_of = fn x, from -> Nx.slice_along_axis(x, from, half, axis: rank - 2) end
          {er, ei, orr, oi} = {rows_of.(re, 0), rows_of.(im, 0), rows_of.(re, half), rows_of.(im, half)}
          tr = Nx.subtract(Nx.multiply(wr, orr), Nx.multiply(wi, oi))
          ti = Nx.add(Nx.multiply(wi, orr), Nx.multiply(wr, oi))
          re = Nx.concatenate([Nx.add(er, tr), Nx.subtract(er, tr)], axis: rank - 1)
          im = Nx.concatenate([Nx.add(ei, ti), Nx.subtract(ei, ti)], axis: rank - 1)
          {:cont, {re, im, half, len * 2}}
        end
      end)

    flat = List.to_tuple(lead ++ [n])
    {Nx.reshape(re, flat), Nx.reshape(im, flat)}
  end

  defp trailing_zeros(n) when rem(n, 2) == 0, do: 1 + trailing_zeros(div(n, 2))
  defp trailing_zeros(_n), do: 0
end
