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
end
