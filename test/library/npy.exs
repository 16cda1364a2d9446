# .npy and .npz writers for the oracles: leaves named by their path, as
# nxc names a map result's .npz entries.
defmodule Npy do
  def npy(t) do
    descr = case t.type do
      {:f, 32} -> "<f4"; {:f, 64} -> "<f8"; {:f, 16} -> "<f2"
      {:s, 8} -> "|i1"; {:s, 16} -> "<i2"; {:s, 32} -> "<i4"; {:s, 64} -> "<i8"
      {:u, 8} -> "|u1"; {:u, 16} -> "<u2"; {:u, 32} -> "<u4"; {:u, 64} -> "<u8"
    end
    dims = Tuple.to_list(t.shape)
    shape = case dims do [] -> "()"; [d] -> "(#{d},)"; ds -> "(" <> Enum.join(ds, ", ") <> ")" end
    header = "{'descr': '#{descr}', 'fortran_order': False, 'shape': #{shape}, }"
    pad = 64 - rem(10 + byte_size(header) + 1, 64)
    header = header <> String.duplicate(" ", rem(pad, 64)) <> "\n"
    IO.iodata_to_binary(["\x93NUMPY", <<1, 0, byte_size(header)::little-16>>, header, Nx.to_binary(t)])
  end
  # leaves by path, as nxc names npz entries
  def leaves(%Nx.Tensor{} = t, prefix), do: [{prefix, t}]
  def leaves(n, prefix) when is_number(n), do: [{prefix, Nx.tensor(n)}]
  # nil (a plain function's struct may hold it in a container field): no array
  def leaves(nil, _prefix), do: []
  # A struct's container fields (those Nx.Container traverses, numbers too;
  # the rest are kept, not leaves).
  def leaves(%_{} = s, prefix) do
    {marked, _} = Nx.Container.traverse(s, nil, fn _, acc -> {:__leaf__, acc} end)
    fields = for {k, v} <- Map.from_struct(s), Map.get(marked, k) != v, into: %{}, do: {k, v}
    leaves(fields, prefix)
  end
  def leaves(m, prefix) when is_map(m), do: m |> Enum.sort() |> Enum.flat_map(fn {k, v} -> leaves(v, join(prefix, k)) end)
  def leaves(t, prefix) when is_tuple(t), do: t |> Tuple.to_list() |> Enum.with_index() |> Enum.flat_map(fn {v, i} -> leaves(v, join(prefix, i)) end)
  defp join(nil, k), do: "#{k}"
  defp join(p, k), do: "#{p}.#{k}"
  def template(%Nx.Tensor{type: {k, b}, shape: s}), do: "#{k}#{b}[#{s |> Tuple.to_list() |> Enum.join(",")}]"
  def template(n) when is_integer(n), do: "s32[]"
  def template(n) when is_float(n), do: "f32[]"
  # A struct: its container fields' templates, and its keep fields that are
  # atoms or numbers as terms (`whiten?: false`); other keep fields are left
  # out (nil to nxc).
  # (A number in a container field, as a fitted model's degree is, is a term
  # too: eagerly, Nx keeps it a number; arg_leaves leaves it out of the file.)
  def template(%mod{} = s) do
    {marked, _} = Nx.Container.traverse(s, nil, fn _, acc -> {:__leaf__, acc} end)
    fields =
      for {k, v} <- Map.from_struct(s), Map.get(marked, k) != v or is_atom(v) or is_number(v) do
        if Map.get(marked, k) != v and not is_number(v), do: "#{k}: #{template(v)}", else: "#{k}: #{inspect(v)}"
      end
    "%#{inspect(mod)}{" <> Enum.join(fields, ", ") <> "}"
  end
  def arg_container(%_{} = s), do: Map.new(Map.from_struct(s), fn {k, v} -> {k, if(is_number(v), do: nil, else: v)} end) |> then(&struct(s, &1))
  def arg_container(c), do: c
  def template(m) when is_map(m), do: "%{" <> (m |> Enum.sort() |> Enum.map(fn {k, v} -> "#{key(k)}#{template(v)}" end) |> Enum.join(", ")) <> "}"
  def template(t) when is_tuple(t), do: "{" <> (t |> Tuple.to_list() |> Enum.map(&template/1) |> Enum.join(", ")) <> "}"
  defp key(k) when is_binary(k), do: "#{inspect(k)} => "
  defp key(k), do: "#{k}: "
  def write(path, container) do
    files = for {name, t} <- leaves(container, nil), do: {String.to_charlist(name <> ".npy"), npy(t)}
    {:ok, _} = :zip.create(String.to_charlist(path), files)
  end
end

# The cases of axon_oracle.exs and scholar_oracle.exs: each {module,
# function, input specs, options} called on inputs `gen` makes from `key`
# (a fifth element, when there is one, names the public functions the call
# runs that nothing can call from outside, such as the unroll loops an
# `lstm` layer runs its cell in: written to covers; or is :jit),
# written to caseN/ as run_cases (oracle_env.sh) reads them: fn (the --fn
# text, options in parentheses), arg0.npy... (the inputs' leaves in order),
# want.npy or want.npz (Nx's result), or nx_error when Nx raised.
defmodule Oracle do
  def write_cases(cases, key, gen) do
    {_, errors} =
      cases
      |> Enum.with_index()
      |> Enum.reduce({key, 0}, fn {spec, i}, {key, errors} ->
        {mod, fun, specs, opts, covers} =
          case spec do
            {mod, fun, specs, opts} -> {mod, fun, specs, opts, []}
            {_, _, _, _, _} -> spec
          end
        # :jit instead of a list: Nx's result through Nx.Defn.jit, as nxc
        # jit compiles the function (a deftransform called directly runs
        # eagerly, without Nx.Defn.Expr's rewrites).
        {jit?, covers} = if covers == :jit, do: {true, []}, else: {false, covers}
        {args, key} = Enum.map_reduce(specs, key, gen)
        dir = "case#{i}"
        File.mkdir_p!(dir)
        if covers != [], do: File.write!("#{dir}/covers", Enum.join(covers, " "))
        name = "#{inspect(mod)}.#{fun}"
        {call, fntext} =
          if opts == [],
            do: {args, name},
            else: {args ++ [opts], "#{name}(#{opts |> inspect() |> String.slice(1..-2//1)})"}
        File.write!("#{dir}/fn", fntext)
        # A container argument (a map, a struct, a tuple) is one .npz with its
        # template (argK.template); a tensor, one .npy.
        Enum.reduce(args, 0, fn
          # An atom or a boolean (a transform's flag): the term itself.
          a, k when is_atom(a) ->
            File.write!("#{dir}/arg#{k}.term", inspect(a))
            k + 1
          m, k when is_tuple(m) or (is_map(m) and not is_struct(m, Nx.Tensor)) ->
            Npy.write("#{dir}/arg#{k}.npz", Npy.arg_container(m))
            File.write!("#{dir}/arg#{k}.template", Npy.template(m))
            k + 1
          arg, k ->
            arg |> Npy.leaves(nil) |> Enum.with_index(k)
            |> Enum.reduce(k, fn {{_, t}, j}, _ -> File.write!("#{dir}/arg#{j}.npy", Npy.npy(t)); j + 1 end)
        end)
        try do
          result =
            if jit? do
              extra = if opts == [], do: [], else: [opts]
              Nx.Defn.jit_apply(fn t -> apply(mod, fun, Tuple.to_list(t) ++ extra) end, [List.to_tuple(args)])
            else
              apply(mod, fun, call)
            end
          case result do
            %Nx.Tensor{} = out -> File.write!("#{dir}/want.npy", Npy.npy(out))
            out -> Npy.write("#{dir}/want.npz", out)
          end
          {key, errors}
        rescue
          e ->
            File.write!("#{dir}/nx_error", Exception.message(e))
            {key, errors + 1}
        end
      end)
    IO.puts("#{errors} cases raised in Nx")
  end
end
