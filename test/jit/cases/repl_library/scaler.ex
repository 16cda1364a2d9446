# A library-shaped module for the repl's tests: a struct of tensors made by
# fit/1, matched by transform/2's head, and a plain def.
defmodule ReplLib.Scaler do
  import Nx.Defn

  @derive {Nx.Container, containers: [:mean, :std]}
  defstruct [:mean, :std]

  deftransform fit(x), do: fit_n(x)

  defnp fit_n(x) do
    %__MODULE__{mean: Nx.mean(x), std: Nx.standard_deviation(x)}
  end

  defn transform(%__MODULE__{mean: mean, std: std}, x), do: (x - mean) / std

  def describe(x), do: Nx.multiply(ReplLib.Sub.Helper.twice(x), 1)
end
