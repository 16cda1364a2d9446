defmodule Nxc do
  @moduledoc """
  nxc as an Nx defn compiler.

      Nx.Defn.jit(&MyDefn.softmax/1, compiler: Nxc).(x)
      Nx.Defn.default_options(compiler: Nxc)
      # config :nx, :default_defn_options, compiler: Nxc

  On a call Nx traces the function; `Nxc` writes the traced expression as an
  nxc graph file (`Nxc.Graph`), compiles it with `nxc aot` into a shared
  object and runs it through a small NIF. Compiled functions are kept per
  function, argument types and shapes, in memory (a second call compiles
  nothing) and on disk under the cache directory (a new VM loads the shared
  object instead of compiling again; the key is the graph's SHA-256).

  Options (`compiler: Nxc, ...`):

    * `:nxc` - the nxc executable (default: `$NXC`, else `nxc` on the PATH)
    * `:cache_dir` - where compiled objects are kept (default: `$NXC_CACHE_DIR`,
      else the user cache directory's `nxc/elixir`)

  Errors from nxc raise `Nxc.CompileError` with nxc's message and the Nx op
  it concerns; parts of Nx that `Nxc` does not compile yet raise
  `Nxc.UnsupportedError`.
  """
  @behaviour Nx.Defn.Compiler

  @impl true
  def __partitions_options__(opts), do: List.duplicate(opts, Keyword.get(opts, :max_concurrency, 1))

  @impl true
  def __to_backend__(_opts), do: Nx.default_backend()

  @impl true
  def __jit__(key, vars, fun, args_list, opts), do: __compile__(key, vars, fun, opts).(args_list)

  @impl true
  def __compile__(key, vars, fun, opts) do
    compiled = compiled(key, vars, fun, opts)
    hooks = Keyword.get(opts, :hooks, %{})
    fn args_list -> Enum.map(args_list, &run(compiled, &1, hooks)) end
  end

  @doc "How many functions this VM has compiled with nxc (not counting those loaded from the cache)."
  def compile_count, do: :persistent_term.get({__MODULE__, :compiles}, 0)

  ## Compiling

  defp compiled(key, vars, fun, opts) do
    params = Nx.Defn.Composite.flatten_list(vars)
    # The arguments' containers too: maps with other keys, tuples of other
    # sizes trace to other programs over the same flat parameters.
    signature = Enum.map(vars, &Nx.Defn.Composite.traverse(&1, fn t -> {t.type, t.shape, t.names, t.vectorized_axes} end))
    options = Keyword.take(opts, [:nxc, :cache_dir])

    # A jitted function passes the same key (its closure) on every call: the
    # same object as last time in this process is found without hashing it,
    # which for a closure over trained weights would read every byte of
    # them (200 us for MNIST's 400 KB) on each call.
    with {last, ^signature, ^options, compiled} <- Process.get({__MODULE__, :last}),
         true <- :erts_debug.same(last, key) do
      compiled
    else
      _ ->
        compiled = lookup_or_compile(key, vars, fun, params, signature, options, opts)
        Process.put({__MODULE__, :last}, {key, signature, options, compiled})
        compiled
    end
  end

  defp lookup_or_compile(key, vars, fun, params, signature, options, opts) do

    # The key is hashed as a tree: one that holds a large expression (a
    # closure over a traced graph, whose shared nodes a hash visits once per
    # path) would cost more than tracing. Such calls trace every time and
    # find the compiled function by the graph's digest instead.
    memo =
      if tree_within?([key], 10_000),
        do: {__MODULE__, key, signature, options}

    case memo && :persistent_term.get(memo, nil) do
      nil ->
        compiled = compile(vars, fun, params, opts)
        if memo, do: :persistent_term.put(memo, compiled)
        compiled

      compiled ->
        compiled
    end
  end

  # Whether `terms`, read as trees (as hashing reads them: a subterm shared
  # n times counts n times), have at most `budget` nodes. The walk stops as
  # soon as the budget is spent, so a graph whose sharing makes its tree
  # astronomically large (a chain of x + x) is answered at once.
  defp tree_within?(_, budget) when budget < 0, do: false
  defp tree_within?([], _), do: true
  defp tree_within?([[] | rest], budget), do: tree_within?(rest, budget)
  defp tree_within?([[h | t] | rest], budget), do: tree_within?([h, t | rest], budget - 1)
  defp tree_within?([t | rest], budget) when is_tuple(t), do: tree_within?(Tuple.to_list(t) ++ rest, budget - 1)
  defp tree_within?([m | rest], budget) when is_map(m), do: tree_within?(Map.to_list(m) ++ rest, budget - 1)

  defp tree_within?([f | rest], budget) when is_function(f) do
    {:env, env} = :erlang.fun_info(f, :env)
    tree_within?(env ++ rest, budget - 1)
  end

  defp tree_within?([_ | rest], budget), do: tree_within?(rest, budget - 1)

  defp compile(vars, fun, params, opts) do
    output = fun.(vars)
    {json, files, leaves, hooks} = Nxc.Graph.build("f", params, output, "c", hooks: :results)
    digest = :crypto.hash(:sha256, [json | Enum.map(files, &elem(&1, 1))]) |> Base.encode16(case: :lower)
    module = "nxc_" <> binary_part(digest, 0, 16)
    dir = Path.join(cache_dir(opts), digest)
    library = Path.join(dir, "lib#{module}.so")

    unless :persistent_term.get({__MODULE__, :library, library}, nil) || File.regular?(library),
      do: build(dir, module, json, files, opts)

    lib = library!(library)

    symbol = module <> "_f"

    %{
      lib: lib,
      symbol: symbol,
      output: output,
      output_count: length(Nx.Defn.Composite.flatten_list([output])),
      hooks: hooks,
      inputs: Enum.map(params, &tensor_bytes(&1.type, Nx.devectorize(&1).shape)),
      outputs: Enum.map(leaves, &tensor_bytes(&1.type, &1.shape)),
      workspace: Nxc.NIF.workspace_size(lib, symbol)
    }
  end

  @doc false
  # The shared object at `path`, loaded once per VM.
  def library!(path) do
    case :persistent_term.get({__MODULE__, :library, path}, nil) do
      nil ->
        loaded =
          try do
            Nxc.NIF.load(path)
          rescue
            ErlangError ->
              {:error,
               "the nxc package's NIF is not loaded (it is built when the package compiles, with a C compiler; " <>
                 "install one and run mix deps.compile nxc --force)"}
          end

        case loaded do
          {:ok, lib} ->
            :persistent_term.put({__MODULE__, :library, path}, lib)
            lib

          {:error, why} ->
            raise Nxc.CompileError, "cannot load #{path}: #{why}"
        end

      lib ->
        lib
    end
  end

  @doc false
  # Bytes of a tensor (or template) of `type` and `shape` as compiled code
  # takes it (a sub-byte integer in a byte of its own).
  def tensor_bytes({_, bits}, shape), do: div(Nx.size(shape) * max(bits, 8), 8)

  @doc false
  # Runs nxc; its refusal raises Nxc.CompileError with its message.
  def run_nxc!(args, opts, json \\ nil) do
    case System.cmd(nxc_executable(opts), args, stderr_to_stdout: true) do
      {_, 0} -> :ok
      {out, _} -> raise Nxc.CompileError, if(json, do: explain(out, json), else: out)
    end
  end

  @doc false
  def valid_name?(name), do: name =~ ~r/\A[A-Za-z_][A-Za-z0-9_]{0,150}\z/

  ## Ahead of time

  @doc """
  Compiles defn functions ahead of time into `dir`, as a module that
  `import_aot/2` defines in another project (which needs neither nxc nor
  LLVM: only these files, Nx and this package).

      Nxc.export_aot("priv/mnist", MNIST.Compiled, [
        {:predict, &MNIST.predict(params, &1), [Nx.template({30, 784}, :f32)]},
        {:softmax, &MNIST.softmax/1, [Nx.template({10}, :f32)]}
      ])

  Each function is `{name, fun, templates}`: `fun` is traced at the
  argument templates, and tensors it captures (trained weights) are baked
  into the shared object. Options: `:nxc` (the executable), `:target` and
  `:cpu` (as for `nxc aot`).
  """
  def export_aot(dir, module, functions, opts \\ []), do: Nxc.AOT.export(dir, module, functions, opts)

  @doc """
  Defines the functions that `export_aot/4` wrote to `dir` for `module` (the
  module name given there, or its library name) in the calling module:

      defmodule MNIST.Compiled do
        require Nxc
        Nxc.import_aot("priv/mnist", MNIST.Compiled)
      end

      MNIST.Compiled.predict(images)

  `dir` is expanded when the module is compiled.
  """
  defmacro import_aot(dir, module) do
    quote bind_quoted: [dir: dir, module: module] do
      meta = Nxc.AOT.read!(Path.expand(dir), module)
      @external_resource meta.path
      library = meta.library_path

      # A library exported for this very module is its NIF: loaded when the
      # module is, it is called with no other native code (no C compiler or
      # loader NIF where it runs). Otherwise the package's NIF opens it.
      own_nif = meta[:nif] == Atom.to_string(__MODULE__)

      if own_nif do
        @on_load :__nxc_load__
        @doc false
        def __nxc_load__, do: :erlang.load_nif(unquote(String.to_charlist(Path.rootname(library))), 0)
        @doc false
        def __nxc_call__(_name, _inputs), do: :erlang.nif_error(:not_loaded)
        @doc false
        def __nxc_call_dirty__(_name, _inputs), do: :erlang.nif_error(:not_loaded)
      end

      for function <- meta.functions do
        args = Macro.generate_arguments(function.arity, __MODULE__)
        escaped = Macro.escape(function)

        if own_nif do
          def unquote(function.name)(unquote_splicing(args)) do
            Nxc.AOT.call_nif(__MODULE__, unquote(escaped), [unquote_splicing(args)])
          end
        else
          def unquote(function.name)(unquote_splicing(args)) do
            Nxc.AOT.call(unquote(library), unquote(escaped), [unquote_splicing(args)])
          end
        end
      end
    end
  end

  @doc """
  Writes `fun`, traced at the argument templates, as an nxc graph file at
  `path` (constants of more than 256 elements as `.npy` files beside it), for
  a build that runs `nxc aot path` where no BEAM runs. The function is named
  `opts[:name]` (default `"f"`).
  """
  def export_graph(fun, templates, path, opts \\ []) do
    {params, output} = Nxc.AOT.trace(fun, templates)
    name = Keyword.get(opts, :name, "f")
    unless valid_name?(name), do: raise(ArgumentError, "#{inspect(name)} is not a C identifier")
    prefix = Path.basename(path, ".json") <> "_c"
    {json, files, _, _} = Nxc.Graph.build(name, params, output, prefix)
    File.mkdir_p!(Path.dirname(path))
    File.write!(path, json)
    for {file, bytes} <- files, do: File.write!(Path.join(Path.dirname(path), file), bytes)
    :ok
  end

  # Writes the graph into a fresh directory, compiles it there and renames
  # the directory into place: a cache entry appears whole or not at all.
  defp build(dir, module, json, files, opts) do
    nxc_executable(opts)
    File.mkdir_p!(Path.dirname(dir))
    tmp = "#{dir}.tmp#{System.unique_integer([:positive])}"
    File.rm_rf!(tmp)
    File.mkdir_p!(tmp)

    try do
      graph = Path.join(tmp, "graph.json")
      File.write!(graph, json)
      for {name, bytes} <- files, do: File.write!(Path.join(tmp, name), bytes)
      run_nxc!(["aot", graph, "--name", module, "--packed-entries", "-o", tmp], opts, json)

      :persistent_term.put({__MODULE__, :compiles}, compile_count() + 1)

      case File.rename(tmp, dir) do
        :ok -> :ok
        # Another process compiled the same graph first: keep its entry.
        {:error, _} -> if File.regular?(Path.join(dir, "lib#{module}.so")), do: :ok, else: File.rename!(tmp, dir)
      end
    after
      File.rm_rf(tmp)
    end
  end

  # nxc's message, with the Nx op of the graph node it names.
  defp explain(out, json) do
    case Regex.run(~r{/functions/0/nodes/(\d+)}, out) do
      [_, index] ->
        ops = Regex.scan(~r/"op":"([a-z_0-9]+)"/, json) |> Enum.map(&Enum.at(&1, 1))

        case Enum.at(ops, String.to_integer(index)) do
          nil -> out
          op -> String.trim_trailing(out) <> "\n(in the graph node of Nx op :#{op})"
        end

      _ ->
        out
    end
  end

  @doc false
  # The nxc to run: opts[:nxc], $NXC, else nxc on the PATH.
  def nxc_executable(opts) do
    case opts[:nxc] || System.get_env("NXC") || System.find_executable("nxc") do
      nil ->
        raise Nxc.CompileError,
              "cannot find nxc: put it on the PATH, set $NXC, or pass compiler: Nxc, nxc: \"/path/to/nxc\""

      path ->
        unless File.regular?(path),
          do: raise(Nxc.CompileError, "cannot run nxc at #{path}: there is no such file")

        path
    end
  end

  defp cache_dir(opts) do
    opts[:cache_dir] || System.get_env("NXC_CACHE_DIR") || Path.join(:filename.basedir(:user_cache, "nxc"), "elixir")
  end

  ## Running

  defp run(compiled, args, hooks) do
    binaries =
      Enum.map(args, fn arg ->
        arg = if is_function(arg, 0), do: arg.(), else: arg
        arg |> Nx.to_binary() |> unpack(Nx.type(arg))
      end)

    case invoke(compiled.lib, compiled.symbol, binaries, compiled.inputs, compiled.outputs, compiled.workspace) do
      {:ok, results} ->
        {results, seen} = Enum.split(results, compiled.output_count)
        run_hooks(compiled.hooks, seen, hooks)
        outputs(compiled.output, results)

      {:error, why} ->
        raise RuntimeError, "Nxc: the compiled function failed: #{why}"
    end
  end

  # The hooks the function passed, in order, with the values they saw (the
  # function's results after its output's), as Nx.Defn.Evaluator runs
  # them: a named hook overridden by the :hooks option, or its callback.
  defp run_hooks(hooks, seen, overrides, done \\ MapSet.new())

  defp run_hooks([], _, _, _), do: :ok

  defp run_hooks([%{spec: spec, container: container, flags: flags, ref: ref} | rest], seen, overrides, done) do
    count = length(Nx.Defn.Composite.flatten_list([container]))
    {mine, seen} = Enum.split(seen, count)
    # A hook inside cond branches ran only if each branch did (u8 flags);
    # one io_call that several branches read runs once.
    {ran, seen} = Enum.split(seen, flags)
    ran? = Enum.all?(ran, &(&1 == <<1>>)) and not MapSet.member?(done, ref)

    callback =
      case spec do
        {:fn, fun} -> fun
        {:named, name, fun} -> Map.get(overrides, name, fun)
      end

    if callback && ran?, do: callback.(outputs(container, mine))
    run_hooks(rest, seen, overrides, if(ran?, do: MapSet.put(done, ref), else: done))
  end

  # Calls that take less than this run on the calling scheduler (the BEAM
  # asks NIFs to return within a millisecond).
  @short_call_us 100
  @short_call_probes 3

  @doc false
  # Runs a compiled function through the NIF. Its first calls run on a dirty
  # CPU scheduler and are timed; a function that returned within
  # @short_call_us runs on the calling scheduler from then on, saving the
  # switch to a dirty scheduler and back (several microseconds) per call;
  # one slow @short_call_probes times stays on dirty schedulers.
  def invoke(lib, symbol, binaries, inputs, outputs, workspace) do
    scheduled({symbol, inputs, outputs}, fn dirty? ->
      if dirty?,
        do: Nxc.NIF.call_dirty(lib, symbol, binaries, inputs, outputs, workspace),
        else: Nxc.NIF.call(lib, symbol, binaries, inputs, outputs, workspace)
    end)
  end

  @doc false
  # Runs call.(dirty?) on the scheduler `function` has earned (see invoke/6).
  def scheduled(function, call) do
    key = {__MODULE__, :short_call, function}

    case :persistent_term.get(key, nil) do
      short? when is_boolean(short?) ->
        call.(not short?)

      # Not decided yet: nil, or the number of timed calls that were slow. A
      # first call can be slow for reasons of its own (a sleeping dirty
      # scheduler, cold caches, a busy machine): three slow ones decide.
      probes ->
        {us, result} = :timer.tc(fn -> call.(true) end)

        if match?({:ok, _}, result) do
          cond do
            us < @short_call_us -> :persistent_term.put(key, true)
            (probes || 0) + 1 >= @short_call_probes -> :persistent_term.put(key, false)
            true -> :persistent_term.put(key, (probes || 0) + 1)
          end
        end

        result
    end
  end

  # Nx packs s2/s4/u2/u4 elements in its binaries; compiled code takes and
  # gives them one per byte, sign- (zero-) extended.
  @doc false
  def unpack(bin, {:s, bits}) when bits < 8, do: for(<<x::size(bits)-signed <- bin>>, into: <<>>, do: <<x::8-signed>>)
  def unpack(bin, {:u, bits}) when bits < 8, do: for(<<x::size(bits) <- bin>>, into: <<>>, do: <<x::8>>)
  def unpack(bin, _type), do: bin

  defp pack(bin, {kind, bits}) when kind in [:s, :u] and bits < 8, do: for(<<x::8 <- bin>>, into: <<>>, do: <<x::size(bits)>>)
  defp pack(bin, _type), do: bin

  @doc false
  # The result binaries as tensors of the traced types, shapes and names, in
  # the traced container.
  def outputs(container, results) do
    {output, []} =
      Nx.Defn.Composite.traverse(container, results, fn leaf, [bin | rest] ->
        tensor =
          case leaf.vectorized_axes do
            [] ->
              bin |> pack(leaf.type) |> Nx.from_binary(leaf.type) |> Nx.reshape(leaf.shape, names: leaf.names)

            # Vectorized axes lead the bytes, as in the graph.
            axes ->
              flat = Nx.devectorize(leaf, keep_names: false)
              bin |> pack(leaf.type) |> Nx.from_binary(leaf.type) |> Nx.reshape(flat.shape) |> Nx.vectorize(axes)
              |> Nx.rename(leaf.names)
          end

        {tensor, rest}
      end)

    output
  end

end

defmodule Nxc.CompileError do
  @moduledoc "Raised when nxc refuses a graph (its message) or cannot be run."
  defexception [:message]
end
