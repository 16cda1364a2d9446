defmodule Lib.Deep do
  import Nx.Defn

  # As Polaris.Shared: containers walked with Nx.Defn.Composite, and an fn
  # of two clauses.
  deftransform deep_merge(left, right, fun) do
    f = fn
      _, [] ->
        {nil, []}

      x, [y | t] ->
        {fun.(x, y), t}
    end

    case Nx.Defn.Composite.traverse(left, Nx.Defn.Composite.flatten_list([right]), f) do
      {merged, []} -> merged
      {_merged, _leftover} -> raise ArgumentError, "unable to merge arguments with incompatible structure"
    end
  end

  deftransform zeros_like(params), do: Nx.Defn.Composite.traverse(params, &Nx.broadcast(0.0, Nx.shape(&1)))

  deftransform leaf_count(params), do: Nx.Defn.Composite.reduce(params, 0, fn _, acc -> acc + 1 end)

  deftransform sign_name(x) do
    describe = fn
      n when is_integer(n) and n < 0 -> :negative
      0 -> :zero
      _ -> :positive
    end

    describe.(x)
  end
end
