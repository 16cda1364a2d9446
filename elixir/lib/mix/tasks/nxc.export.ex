defmodule Mix.Tasks.Nxc.Export do
  @shortdoc "Compiles defn functions ahead of time into a directory, once"
  @moduledoc """
  Compiles the defn functions that a function of the project returns, as
  `Nxc.export_aot/4` does, without listing them in `mix.exs`:

      mix nxc.export MNIST.Compiled MNIST.Exports.functions priv/mnist
      mix nxc.export MNIST.Board MNIST.Exports.functions board --target aarch64-linux-gnu

  Arguments: the module name the functions are exported under (what
  `Nxc.import_aot/2` is given), a zero-arity function returning
  `[{name, fun, templates}]`, and the output directory. Options: `--target`,
  `--cpu` and `--nxc` (the executable). The project is compiled first.
  """
  use Mix.Task

  @impl true
  def run(args) do
    {opts, positional, invalid} = OptionParser.parse(args, strict: [target: :string, cpu: :string, nxc: :string])
    if invalid != [], do: Mix.raise("mix nxc.export: unknown options #{inspect(invalid)}")

    case positional do
      [module, function, dir] ->
        Mix.Task.run("compile", [])
        {m, f} = parse_function(function)
        module = Module.concat([module])

        unless Code.ensure_loaded?(m) and function_exported?(m, f, 0),
          do: Mix.raise("mix nxc.export: #{function}/0 is undefined (it should return [{name, fun, templates}])")

        :ok = Nxc.export_aot(dir, module, apply(m, f, []), opts)
        Mix.shell().info("Compiled #{inspect(module)} with nxc into #{dir}")

      _ ->
        Mix.raise("usage: mix nxc.export MODULE FUNCTIONS_FUN DIR [--target TRIPLE] [--cpu CPU] [--nxc PATH]")
    end
  end

  defp parse_function(text) do
    case String.split(text, ".") |> Enum.split(-1) do
      {[_ | _] = mod, [fun]} when fun != "" -> {Module.concat(mod), String.to_atom(fun)}
      _ -> Mix.raise("mix nxc.export: expected a function as Module.function, got: #{inspect(text)}")
    end
  end
end
