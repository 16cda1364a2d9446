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
end
