# A module called through aliases from test/lit/library-misc.nx.
defmodule Lib.Deep.Helpers do
  import Nx.Defn
  require Nx

  deftransform rows(%Nx.Tensor{shape: {rows, _}} = t), do: {rows, Nx.is_tensor(t)}
end
