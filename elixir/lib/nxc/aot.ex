defmodule Nxc.AOT do
  @moduledoc """
  Ahead-of-time modules for Elixir: `Nxc.export_aot/4` compiles defn
  functions into a directory (a shared object, its header and manifest, and
  a description for `Nxc.import_aot/2`); `Nxc.import_aot/2` defines them as
  functions of a module in a project that needs neither nxc nor LLVM, only
  those files, Nx and this package's NIF.

  The directory holds, for a module named `mnist_compiled`:

    * `libmnist_compiled.so`, `mnist_compiled.h`, `mnist_compiled.json` - as
      `nxc aot` writes them (the functions are `mnist_compiled_NAME`);
    * `mnist_compiled.nxc` - the functions' names, argument templates and
      result containers (an Erlang term);
    * `graph.json` and its `.npy` constants - the traced graph, which `nxc aot`
      and `nxc jit` also compile (for other targets, say).
  """

  @doc false
  # A defn compiler that only traces: __compile__ hands the traced
  # parameters and output to the caller.
  def __compile__(_key, vars, fun, _opts) do
    output = fun.(vars)
    Process.put(__MODULE__, {Nx.Defn.Composite.flatten_list(vars), output})
    fn _ -> raise "Nxc.AOT only traces" end
  end

  def __jit__(_key, _vars, _fun, _args, _opts), do: raise("Nxc.AOT only traces")
  def __partitions_options__(opts), do: [opts]
  def __to_backend__(_opts), do: Nx.default_backend()

  @doc false
  # Traces `fun` at `templates`: {flattened parameters, output container}.
  def trace(fun, templates) do
    Process.delete(__MODULE__)
    Nx.Defn.compile(fun, templates, compiler: __MODULE__)
    Process.delete(__MODULE__) || raise ArgumentError, "tracing the function gave no expression"
  end

  @doc false
  def library_name(module) when is_atom(module) do
    module |> inspect() |> Macro.underscore() |> String.replace("/", "_")
  end

  def library_name(name) when is_binary(name), do: name

  @doc false
  def export(dir, module, functions, opts) do
    module |> prepare(functions, opts) |> write(dir, opts)
  end

  @doc false
  # Traces every function: the module's name, its graph file and constant
  # files, and the description import_aot reads. Nothing is written.
  def prepare(module, functions, opts \\ []) do
    name = library_name(module)
    unless Nxc.valid_name?(name), do: raise(ArgumentError, "#{inspect(module)} does not make a C module name")

    unless is_list(functions) and functions != [] and Enum.all?(functions, &match?({_, _, _}, &1)),
      do: raise(ArgumentError, "expected a non-empty list of {name, fun, templates}, got: #{inspect(functions)}")

    names = Enum.map(functions, &elem(&1, 0))
    if Enum.uniq(names) != names, do: raise(ArgumentError, "function names must be distinct, got: #{inspect(names)}")

    traced =
      for {fname, fun, templates} <- functions do
        unless is_atom(fname) and Nxc.valid_name?(Atom.to_string(fname)),
          do: raise(ArgumentError, "#{inspect(fname)} is not a function name nxc can export")

        {params, output} = trace(fun, templates)
        {graph, files, leaves, _hooks} = Nxc.Graph.function(Atom.to_string(fname), params, output, "#{fname}_c")
        description = %{
          name: fname,
          symbol: "#{name}_#{fname}",
          arity: length(templates),
          params: Enum.map(params, &template/1),
          output: strip(output),
          input_bytes: Enum.map(params, &Nxc.tensor_bytes(&1.type, &1.shape)),
          output_bytes: Enum.map(leaves, &Nxc.tensor_bytes(&1.type, &1.shape))
        }

        {graph, files, description}
      end

    %{
      name: name,
      graph: Nxc.Graph.file(Enum.map(traced, &elem(&1, 0))),
      files: Enum.flat_map(traced, &elem(&1, 1)),
      meta: %{format: 1, library: "lib#{name}.so", functions: Enum.map(traced, &elem(&1, 2)), nif: nif_module(module, opts)}
    }
  end

  # The library is also the NIF of the Erlang module it is exported under
  # (nxc aot --nif), so that importing it needs no other native code; not for
  # a module given by name, or with nif: false.
  defp nif_module(module, opts) when is_atom(module) do
    if Keyword.get(opts, :nif, true), do: Atom.to_string(module)
  end

  defp nif_module(_name, _opts), do: nil

  @doc false
  # Writes a prepared module into `dir` and compiles it there with nxc.
  def write(prepared, dir, opts) do
    File.mkdir_p!(dir)
    graph_path = Path.join(dir, "graph.json")
    File.write!(graph_path, prepared.graph)
    for {file, bytes} <- prepared.files, do: File.write!(Path.join(dir, file), bytes)

    args = ["aot", graph_path, "--name", prepared.name, "--packed-entries", "-o", dir] ++ target_args(opts)

    meta =
      if nif = prepared.meta[:nif] do
        try do
          Nxc.run_nxc!(args ++ ["--nif", nif], opts)
          prepared.meta
        rescue
          # An nxc built without erl_nif.h, or a 32-bit target: the
          # package's NIF opens the library instead.
          e in Nxc.CompileError ->
            if e.message =~ ~r/built without Erlang's erl_nif.h|--nif supports 64-bit targets/ do
              Nxc.run_nxc!(args, opts)
              %{prepared.meta | nif: nil}
            else
              reraise e, __STACKTRACE__
            end
        end
      else
        Nxc.run_nxc!(args, opts)
        prepared.meta
      end

    File.write!(Path.join(dir, "#{prepared.name}.nxc"), :erlang.term_to_binary(meta))
    :ok
  end

  @doc false
  # What a prepared module's files depend on: its graphs and constants, the
  # nxc options and nxc itself (its version line).
  def fingerprint(prepared, opts) do
    version =
      case System.cmd(Nxc.nxc_executable(opts), ["--version"], stderr_to_stdout: true) do
        {out, 0} -> out
        {out, status} -> raise Nxc.CompileError, "nxc --version exited with #{status}: #{out}"
      end

    options = Keyword.take(opts, [:target, :cpu, :nif])
    files = Enum.sort(prepared.files)
    :crypto.hash(:sha256, :erlang.term_to_binary({1, version, options, prepared.graph, files, prepared.meta}))
    |> Base.encode16(case: :lower)
  end

  defp target_args(opts) do
    Enum.flat_map([target: "--target", cpu: "--cpu"], fn {key, flag} ->
      if value = opts[key], do: [flag, value], else: []
    end)
  end

  defp template(%Nx.Tensor{type: type, shape: shape, names: names}), do: {type, shape, names}

  # The output container with its tensors replaced by templates.
  defp strip(output) do
    {stripped, _} = Nx.Defn.Composite.traverse(output, nil, fn t, acc -> {Nx.template(t.shape, t.type, names: t.names), acc} end)
    stripped
  end

  @doc false
  def read!(dir, module) do
    name = library_name(module)
    path = Path.join(dir, "#{name}.nxc")
    # Not [:safe]: the description names the functions, whose atoms a fresh
    # VM (the importing project's) has not seen yet. It is the user's own
    # build output, read at compile time, like the source it sits beside.
    meta =
      try do
        path |> File.read!() |> :erlang.binary_to_term()
      rescue
        ArgumentError -> raise ArgumentError, "#{path} is not a module description written by Nxc.export_aot"
      end

    case meta do
      %{format: 1, library: library, functions: functions} when is_binary(library) and is_list(functions) ->
        Map.merge(meta, %{path: path, library_path: Path.join(dir, library)})

      %{format: format} ->
        raise ArgumentError, "#{path} has format #{inspect(format)}; this Nxc reads format 1 (export the module again)"

      _ ->
        raise ArgumentError, "#{path} is not a module description written by Nxc.export_aot"
    end
  end

  @doc false
  # Calls an imported function: the arguments' tensors in order, checked
  # against the templates it was compiled for.
  def call(library_path, function, args) do
    # The library and the function's workspace size, once per VM.
    {lib, workspace} =
      case :persistent_term.get({__MODULE__, library_path, function.symbol}, nil) do
        nil ->
          lib = Nxc.library!(library_path)
          loaded = {lib, Nxc.NIF.workspace_size(lib, function.symbol)}
          :persistent_term.put({__MODULE__, library_path, function.symbol}, loaded)
          loaded

        loaded ->
          loaded
      end

    binaries = input_binaries(function, args)

    case Nxc.invoke(lib, function.symbol, binaries, function.input_bytes, function.output_bytes, workspace) do
      {:ok, results} -> Nxc.outputs(function.output, results)
      {:error, why} -> raise RuntimeError, "#{function.name}: #{why}"
    end
  end

  @doc false
  # Calls an imported function through the module's own NIF (the library
  # was built with nxc aot --nif and loaded by `module`'s @on_load).
  def call_nif(module, function, args) do
    binaries = input_binaries(function, args)
    symbol = function.symbol

    result =
      Nxc.scheduled({module, symbol}, fn
        true -> module.__nxc_call_dirty__(symbol, binaries)
        false -> module.__nxc_call__(symbol, binaries)
      end)

    case result do
      {:ok, results} -> Nxc.outputs(function.output, results)
      {:error, why} -> raise RuntimeError, "#{function.name}: #{why}"
    end
  end

  # The arguments' tensors in order, checked against the templates.
  defp input_binaries(function, args) do
    tensors = Nx.Defn.Composite.flatten_list(args)

    if length(tensors) != length(function.params),
      do: raise(ArgumentError, "#{function.name} takes #{length(function.params)} tensors, got #{length(tensors)}")

    Enum.zip_with(tensors, function.params, fn t, {type, shape, _names} ->
        t = Nx.to_tensor(t)

        if t.shape != shape or t.type != type,
          do:
            raise(ArgumentError,
              "#{function.name} was compiled for #{Nx.Type.to_string(type)}#{inspect(shape)}, got #{Nx.Type.to_string(t.type)}#{inspect(t.shape)}"
            )

        t |> Nx.to_binary() |> Nxc.unpack(type)
      end)
  end
end
