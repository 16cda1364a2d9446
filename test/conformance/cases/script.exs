# A whole Elixir script, as users have them: nxc compiles the defns and
# passes over everything else (Mix.install, docs, plain functions, strings
# with interpolation, heredocs, sigils, binaries, maps, script code).
Mix.install([{:nx, "~> 0.9"}, {:exla, "~> 0.9"}])

defmodule Script do
  @moduledoc """
  Uses "quotes", #{:interpolation} and 'charlists'.
  """
  import Nx.Defn
  require Logger

  @spec scale(Nx.t()) :: Nx.t()
  @factor 3

  # case: a defn in a whole script file, with a module attribute
  # args: '[1, 2]'
  # expect:
  #   #Nx.Tensor<
  #     s32[2]
  #     [3, 6]
  #   >
  defn scale(x), do: x * @factor

  def load(path) do
    <<_::32, n::32, rest::binary>> = File.read!(path)
    Logger.info("read #{n} items from #{inspect(path)}")
    %{count: n, data: rest, tags: ~w(a b c), first: ?a}
  end

  defp log(x), do: IO.inspect(x, label: "x")
end

data = Script.load("data.bin")
Enum.each(1..3, fn i -> IO.puts("step #{i}") end)
