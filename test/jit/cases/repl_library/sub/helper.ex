defmodule ReplLib.Sub.Helper do
  import Nx.Defn

  defn twice(x), do: x * 2
end
