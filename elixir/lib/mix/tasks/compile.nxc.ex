defmodule Mix.Tasks.Compile.Nxc do
  @moduledoc """
  Compiles the defn functions a project lists, ahead of time, at `mix compile`.

  In `mix.exs`, after the Elixir compiler (the functions to export live in
  the project's own modules, which must be compiled first):

      def project do
        [
          compilers: Mix.compilers() ++ [:nxc],
          nxc: [
            {MNIST.Compiled, {MNIST.Exports, :functions, []}},
            {MNIST.Board, {MNIST.Exports, :functions, []}, target: "aarch64-linux-gnu"}
          ],
          ...
        ]
      end

  Each entry is `{module, {m, f, a}}` or `{module, {m, f, a}, options}`:
  `apply(m, f, a)` returns the functions as `Nxc.export_aot/4` takes them
  (`[{name, fun, templates}]`, weights captured in the closures), and the
  module is written to `priv/nxc/NAME` (NAME: the module as a C name,
  `mnist_compiled`; `output:` chooses another directory) for
  `Nxc.import_aot/2` in the project that uses it. Options: `:output`,
  `:target`, `:cpu` and `:nxc` (the executable), as for `Nxc.export_aot/4`.

  A module is compiled again only when what it depends on changed: the
  traced graphs and their constants (so new weights rebuild it), the options,
  and nxc's version; otherwise the compiler reports nothing to do.
  `mix compile.nxc --force` rebuilds every module.
  """
  use Mix.Task.Compiler

  @fingerprint_file ".nxc-fingerprint"

  @impl true
  def run(args) do
    {opts, _, _} = OptionParser.parse(args, switches: [force: :boolean])
    # Run alone (mix compile.nxc), the project's modules and deps are not on
    # the code path yet; after the Elixir compiler they are, and this is a no-op.
    Mix.Task.run("loadpaths", [])
    Code.prepend_path(Mix.Project.compile_path())
    config = Mix.Project.config()
    entries = Keyword.get(config, :nxc, [])
    unless is_list(entries), do: Mix.raise("the project's :nxc entry must be a list, got: #{inspect(entries)}")

    results = Enum.map(entries, &compile_entry(&1, opts[:force] || false, File.cwd!()))
    if Enum.member?(results, :ok), do: {:ok, []}, else: {:noop, []}
  end

  @doc false
  # Compiles one entry in a project rooted at `root`: :ok when it was
  # (re)built, :noop when its files were up to date.
  def compile_entry(entry, force, root) do
    {module, {m, f, a}, options} =
      case entry do
        {module, {m, f, a}} when is_atom(module) and is_atom(m) and is_atom(f) and is_list(a) -> {module, {m, f, a}, []}
        {module, {m, f, a}, options} when is_atom(module) and is_atom(m) and is_atom(f) and is_list(a) and is_list(options) -> {module, {m, f, a}, options}
        other -> Mix.raise("nxc: expected {module, {m, f, args}} or {module, {m, f, args}, options} in the project's :nxc list, got: #{inspect(other)}")
      end

    case Code.ensure_compiled(m) do
      {:module, _} ->
        :ok

      {:error, _} ->
        Mix.raise(
          "nxc: #{inspect(m)} is not compiled, so #{inspect(module)}'s functions cannot be traced; " <>
            "list :nxc after the Elixir compiler (compilers: Mix.compilers() ++ [:nxc])"
        )
    end

    unless function_exported?(m, f, length(a)),
      do: Mix.raise("nxc: #{inspect(m)}.#{f}/#{length(a)} is undefined (it should return [{name, fun, templates}])")

    functions = apply(m, f, a)
    prepared = Nxc.AOT.prepare(module, functions, options)
    dir = Path.expand(Keyword.get(options, :output, Path.join(["priv", "nxc", prepared.name])), root)
    fingerprint = Nxc.AOT.fingerprint(prepared, options)
    stamp = Path.join(dir, @fingerprint_file)

    if not force and File.read(stamp) == {:ok, fingerprint} and File.regular?(Path.join(dir, "#{prepared.name}.nxc")) do
      :noop
    else
      # The stamp goes last: an interrupted build is redone next time.
      File.rm(stamp)
      Nxc.AOT.write(prepared, dir, options)
      File.write!(stamp, fingerprint)
      Mix.shell().info("Compiled #{inspect(module)} with nxc into #{Path.relative_to(dir, root)}")
      :ok
    end
  end
end
