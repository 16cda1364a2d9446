defmodule Nxc.MixProject do
  use Mix.Project

  def project do
    [
      app: :nxc,
      version: "0.1.0",
      elixir: "~> 1.15",
      start_permanent: Mix.env() == :prod,
      compilers: [:nxc_nif] ++ Mix.compilers(),
      deps: deps()
    ]
  end

  def application do
    [extra_applications: [:logger, :crypto]]
  end

  # Users on Hex declare {:nx, "~> 0.10"}; machines without Hex (this
  # repository's CI) point NXC_NX_PATH at a checkout of Nx.
  defp deps do
    case System.get_env("NXC_NX_PATH") do
      nil -> [{:nx, "~> 0.10"}]
      path -> [{:nx, path: path}]
    end
  end
end

defmodule Mix.Tasks.Compile.NxcNif do
  @moduledoc "Builds priv/nxc_nif.so, the NIF that loads and calls modules compiled by nxc."
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    app = Mix.Project.app_path()
    priv = Path.join(app, "priv")
    source = Path.expand("c_src/nxc_nif.c")
    target = Path.join(priv, "nxc_nif.so")
    File.mkdir_p!(priv)

    cc = System.get_env("CC", "cc")

    cond do
      not stale?(source, target) ->
        {:noop, []}

      # A machine without a C compiler (a board) still imports modules
      # exported with their own NIF; only compiler: Nxc and modules opened
      # through this NIF need it.
      System.find_executable(cc) == nil ->
        Mix.shell().info(
          "nxc: no C compiler (#{cc}): the package's NIF is not built; imported modules with their own NIF " <>
            "work, compiler: Nxc does not"
        )

        {:noop, []}

      true ->
        include = Path.join([:code.root_dir(), "usr", "include"])
        args = ~w(-O2 -std=c11 -Wall -Wextra -Werror -fPIC -shared) ++ ["-I", include, source, "-o", target, "-ldl"]

        case System.cmd(cc, args, stderr_to_stdout: true) do
          {_, 0} ->
            {:ok, []}

          {out, status} ->
            Mix.raise("building the nxc NIF failed (#{cc} exited with #{status}):\n#{out}")
        end
    end
  end

  defp stale?(source, target) do
    case {File.stat(source), File.stat(target)} do
      {{:ok, s}, {:ok, t}} -> s.mtime > t.mtime
      _ -> true
    end
  end
end
