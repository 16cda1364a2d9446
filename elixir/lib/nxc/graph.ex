defmodule Nxc.Graph do
  @moduledoc """
  Writes a traced defn function, an `Nx.Defn.Expr` graph, as an nxc graph
  file (`docs/graph-format.md` in the nxc repository).

  Nx's expressions keep the backend's conventions: the operands of `add` may
  have other types and shapes than its result (promotion and broadcasting are
  implicit), `sum` may keep its axes, a constant may stand for a whole
  tensor. nxc's graph states all of it: this module inserts the `as_type`,
  `broadcast` and `reshape` nodes, so nxc checks every node as it checks the
  graphs it traces itself.

  An op it does not write yet raises `Nxc.UnsupportedError`, naming the op.
  """
  alias Nx.Defn.Expr
  alias Nx.Tensor, as: T

  # Constants with more elements than this go to .npy files beside the graph.
  @inline_limit 256

  @unary ~w(exp expm1 log log1p sigmoid cos sin tan cosh sinh tanh acosh asinh atanh sqrt rsqrt cbrt
            negate sign abs bitwise_not population_count count_leading_zeros floor ceil round
            erf erfc erf_inv acos asin atan)a
  @predicates ~w(is_nan is_infinity)a
  @arithmetic ~w(add subtract multiply divide pow remainder atan2 max min quotient
                 bitwise_and bitwise_or bitwise_xor left_shift right_shift)a
  @comparisons ~w(equal not_equal greater less less_equal greater_equal logical_and logical_or logical_xor)a
  @reductions ~w(sum product reduce_max reduce_min)a

  @doc """
  The graph file of one function: `params` are its parameter expressions in
  order (the flattened vars), `output` its result container. Returns
  `{json, files, leaves}`: `files` a list of `{file_name, npy_bytes}` the
  graph refers to (constants of more than #{@inline_limit} elements), and
  `leaves` the flattened output templates, in the order of the graph's
  results.
  """
  def build(name, params, output, file_prefix \\ "c", opts \\ []) do
    {function, files, leaves, hooks} = function(name, params, output, file_prefix, opts)
    {file([function]), files, leaves, hooks}
  end

  @doc "A graph file holding the given functions (from `function/4`)."
  def file(functions), do: Nxc.JSON.encode(%{"format" => "nxc-graph", "version" => 1, "functions" => functions})

  @doc """
  One function of a graph file, as `build/5` describes; `file_prefix`
  starts the names of its constants' files (distinct per function).

  Hooks (`io_call` nodes: `print_value`, `hook`) pass their value on; with
  `hooks: :results` the values they see also become results of the
  function, after the output's, and `hooks` lists them in the order Nx
  would run them: `%{spec: callback_spec, container: template}` each, its
  leaves in order, `flags` how many u8 results after them say whether it ran
  (inside cond branches), and `ref` the io_call's (one io_call may be
  recorded in several branches; it runs once). Otherwise (`:drop`, ahead
  of time) they run nothing.
  """
  def function(name, params, output, file_prefix, opts \\ []) do
    # Vectorized axes are leading axes, as Nx's own evaluator sees them.
    leaves = Nx.Defn.Composite.flatten_list([output]) |> Enum.map(&Nx.devectorize/1)
    params = Enum.map(params, &Nx.devectorize/1)

    # regions: a stack of the node lists of the regions being written.
    state = %{
      nodes: [],
      count: 0,
      ids: %{},
      scopes: %{},
      files: [],
      prefix: file_prefix,
      regions: [],
      # Hooks become results only when there are any: a cond then lowers
      # its branches once more to find them (cond_chain).
      hook_mode: if(Keyword.get(opts, :hooks, :drop) == :results and io_calls?(output), do: :results, else: :drop),
      hooks: [],
      in_while: 0
    }

    # One parameter node per parameter, in order.
    state =
      params
      |> Enum.with_index()
      |> Enum.reduce(state, fn {p, i}, s ->
        {idx, s} = emit(s, node("parameter", [], p) |> Map.put("index", i))
        %{s | ids: Map.put(s.ids, p.data.id, idx)}
      end)

    # Nx numbers the root parameters by position: an expression built apart
    # (Nx.Defn.Graph's stages) names them by other parameter nodes.
    # (and whichever context the node they were made from had).
    state = Map.put(state, :root_params, Enum.to_list(0..(length(params) - 1)//1))

    {results, state} = Enum.map_reduce(leaves, state, &lower/2)

    # A hook of the outer scope that a cond branch reads too was lowered in
    # both places (as the rest of such expressions are): it runs once, as
    # the outer scope's.
    hooks = Enum.reverse(state.hooks)
    unconditional = for h <- hooks, h.flags == [], into: MapSet.new(), do: h.ref
    hooks = Enum.reject(hooks, &(&1.flags != [] and MapSet.member?(unconditional, &1.ref)))

    function = %{
      "name" => name,
      "parameters" =>
        Enum.with_index(params, fn p, i -> %{"name" => "x#{i}", "type" => type(p.type), "shape" => shape(p)} end),
      "nodes" => Enum.reverse(state.nodes),
      "result" => results ++ Enum.flat_map(hooks, &(&1.ids ++ &1.flags))
    }

    flag = template({:u, 8}, {})

    hook_leaves =
      Enum.flat_map(hooks, &(Nx.Defn.Composite.flatten_list([&1.container]) ++ List.duplicate(flag, length(&1.flags))))

    hooks = Enum.map(hooks, &(&1 |> Map.delete(:ids) |> Map.put(:flags, length(&1.flags))))
    {function, Enum.reverse(state.files), leaves ++ hook_leaves, hooks}
  end

  # Whether the expression holds an io_call anywhere (inside while and cond
  # too): one walk over its nodes, each visited once.
  defp io_calls?(output) do
    {found, _} = Nx.Defn.Composite.reduce(output, {false, MapSet.new()}, &scan_io/2)
    found
  end

  defp scan_io(_, {true, _} = acc), do: acc

  defp scan_io(%T{data: %Expr{id: id, op: op, args: args}}, {false, seen} = acc) do
    cond do
      MapSet.member?(seen, id) -> acc
      op == :io_call -> {true, seen}
      true -> Enum.reduce(args, {false, MapSet.put(seen, id)}, &scan_arg/2)
    end
  end

  defp scan_io(_, acc), do: acc

  defp scan_arg(_, {true, _} = acc), do: acc
  defp scan_arg(%T{} = t, acc), do: scan_io(t, acc)
  defp scan_arg(list, acc) when is_list(list), do: Enum.reduce(list, acc, &scan_arg/2)
  defp scan_arg(tuple, acc) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> Enum.reduce(acc, &scan_arg/2)
  defp scan_arg(_, acc), do: acc

  ## Nodes

  defp node(op, operands, %T{} = t, options \\ %{}) do
    n = %{"op" => op, "type" => type(t.type), "shape" => shape(t)}
    n = if operands == [], do: n, else: Map.put(n, "operands", operands)
    if options == %{}, do: n, else: Map.put(n, "options", options)
  end

  defp emit(state, node) do
    regions =
      case state.regions do
        [current | outer] -> [[state.count | current] | outer]
        [] -> []
      end

    {state.count, %{state | nodes: [node | state.nodes], count: state.count + 1, regions: regions}}
  end

  # A region of a `while` or `cond`: `args` its region arguments (the
  # parameters of a while's context), `results` the expressions it yields.
  # Its nodes are forgotten afterwards: nothing outside may use them.
  defp region(args, context, results, state) do
    saved = %{ids: state.ids, scopes: state.scopes}
    state = %{state | regions: [[] | state.regions]}

    {arg_ids, state} =
      args
      |> Enum.with_index()
      |> Enum.map_reduce(state, fn {a, i}, s -> emit(s, node("region_arg", [], a) |> Map.put("index", i)) end)

    state = if context, do: %{state | scopes: Map.put(state.scopes, context, arg_ids)}, else: state
    {result_ids, state} = Enum.map_reduce(results, state, fn {expr, template}, s -> operand(expr, template.type, template.shape, s) end)
    [nodes | outer] = state.regions
    region = %{"args" => arg_ids, "nodes" => Enum.reverse(nodes), "results" => result_ids}
    {region, %{state | regions: outer, ids: saved.ids, scopes: saved.scopes}}
  end

  defp leaves(tuple) when is_tuple(tuple), do: Tuple.to_list(tuple)
  defp leaves(%T{} = t), do: [t]

  defp result_types(templates), do: Enum.map(templates, &%{"type" => type(&1.type), "shape" => shape(&1)})

  defp template(type, shape), do: %T{type: type, shape: shape, names: List.duplicate(nil, tuple_size(shape)), data: nil}

  # The node of an expression, lowered once.
  defp lower(%T{vectorized_axes: [_ | _]} = t, state), do: lower(Nx.devectorize(t), state)

  defp lower(%T{data: %Expr{id: id}} = t, state) do
    case state.ids do
      %{^id => idx} ->
        {idx, state}

      _ ->
        {idx, state} = lower_op(t, state)
        {idx, %{state | ids: Map.put(state.ids, id, idx)}}
    end
  end

  defp lower(%T{} = t, _state), do: unsupported("a tensor that is not an expression (#{inspect(t.data.__struct__)})")

  # The operand `t` as a node of `type` and `shape` (a conversion and a
  # broadcast along the trailing axes where needed).
  defp operand(t, type, shape, state) do
    t = Nx.devectorize(t)
    {idx, state} = lower(t, state)
    {idx, state} = if t.type == type, do: {idx, state}, else: emit(state, node("as_type", [idx], template(type, t.shape)))

    if t.shape == shape do
      {idx, state}
    else
      rank = tuple_size(shape)
      own = tuple_size(t.shape)
      axes = if own == 0, do: [], else: Enum.to_list((rank - own)..(rank - 1))
      emit(state, node("broadcast", [idx], template(type, shape), %{"axes" => axes}))
    end
  end

  # Top-level parameters are lowered up front; these are a block's.
  defp lower_op(%T{data: %Expr{op: :parameter, args: [i], context: context}}, state) do
    case state.scopes do
      %{^context => args} -> {Enum.fetch!(args, i), state}
      _ when state.regions == [] and i < length(state.root_params) -> {Enum.fetch!(state.root_params, i), state}
      _ -> unsupported("parameter #{i} of #{inspect(context)}")
    end
  end

  defp lower_op(%T{data: %Expr{op: :metadata, args: [expr, _]}}, state), do: lower(expr, state)

  # A hook: its value, passed on (a container's leaves are taken by elem);
  # with hooks: :results, recorded to become results.
  defp lower_op(%T{data: %Expr{op: :io_call, args: [expr, spec, template, ref]}}, state) do
    values = Nx.Defn.Composite.flatten_list([expr]) |> Enum.map(&Nx.devectorize/1)
    {ids, state} = Enum.map_reduce(values, state, &lower/2)

    state =
      cond do
        state.hook_mode == :drop ->
          state

        state.in_while > 0 ->
          unsupported("a hook (print_value, hook or io_call) inside while")

        true ->
          container = Nx.Defn.Composite.traverse(expr, &Nx.to_template(Nx.devectorize(&1)))
          %{state | hooks: [%{spec: spec, container: container, ids: ids, flags: [], ref: ref} | state.hooks]}
      end

    case template do
      %T{} -> {hd(ids), state}
      _ -> {{:leaves, ids}, state}
    end
  end

  defp lower_op(%T{data: %Expr{op: :constant, args: [value]}} = t, state) do
    {idx, state} = emit(state, node("constant", [], template(t.type, {})) |> Map.put("value", [number(value)]))
    if t.shape == {}, do: {idx, state}, else: emit(state, node("broadcast", [idx], t, %{"axes" => []}))
  end

  defp lower_op(%T{data: %Expr{op: :tensor, args: [tensor]}} = t, state) do
    if Nx.size(tensor) <= @inline_limit do
      values = tensor |> Nx.to_flat_list() |> Enum.map(&number/1)
      emit(state, node("constant", [], t) |> Map.put("value", values))
    else
      file = "#{state.prefix}#{state.count}.npy"
      state = %{state | files: [{file, npy(tensor)} | state.files]}
      emit(state, node("constant", [], t) |> Map.put("data", %{"file" => file}))
    end
  end

  # The parts of complex values, and abs of a complex value (a real result of
  # a complex operand, not the operand converted first).
  defp lower_op(%T{data: %Expr{op: op, args: [x]}} = t, state) when op in [:real, :imag, :conjugate] do
    {a, state} = lower(x, state)
    emit(state, node(Atom.to_string(op), [a], t))
  end

  defp lower_op(%T{data: %Expr{op: :abs, args: [%T{type: {:c, _}} = x]}} = t, state) do
    {a, state} = lower(x, state)
    emit(state, node("abs", [a], t))
  end

  # The discrete Fourier transforms, written with Nx ops.
  defp lower_op(%T{data: %Expr{op: op, args: [x, opts]}} = t, state) when op in [:fft, :ifft] do
    lower(Nxc.Expand.dft(t, x, opts, op == :ifft), state)
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x]}} = t, state) when op in @unary do
    {a, state} = operand(x, t.type, x.shape, state)
    emit(state, node(Atom.to_string(op), [a], t))
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x]}} = t, state) when op in @predicates do
    {a, state} = lower(x, state)
    emit(state, node(Atom.to_string(op), [a], t))
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x]}} = t, state) when op in [:as_type, :bitcast] do
    {a, state} = lower(x, state)
    emit(state, node(Atom.to_string(op), [a], t))
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x, y]}} = t, state) when op in @arithmetic do
    {a, state} = operand(x, t.type, t.shape, state)
    {b, state} = operand(y, t.type, t.shape, state)
    emit(state, node(Atom.to_string(op), [a, b], t))
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x, y]}} = t, state) when op in @comparisons do
    type = Nx.Type.merge(x.type, y.type)
    {a, state} = operand(x, type, t.shape, state)
    {b, state} = operand(y, type, t.shape, state)
    emit(state, node(Atom.to_string(op), [a, b], t))
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x, opts]}} = t, state) when op in @reductions or op in [:all, :any] do
    axes = opts[:axes] || Enum.to_list(0..(tuple_size(x.shape) - 1)//1)
    {a, state} = if op in [:all, :any], do: lower(x, state), else: operand(x, t.type, x.shape, state)
    reduced = x.shape |> Tuple.to_list() |> Enum.with_index() |> Enum.reject(fn {_, i} -> i in axes end)
    reduced = reduced |> Enum.map(&elem(&1, 0)) |> List.to_tuple()
    {idx, state} = emit(state, node(Atom.to_string(op), [a], template(t.type, reduced), %{"axes" => axes}))
    reshape_to(idx, reduced, t, state)
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x, opts]}} = t, state) when op in [:argmax, :argmin] do
    {a, state} = lower(x, state)

    {a, axis, from} =
      case opts[:axis] do
        nil -> {a, 0, {Nx.size(x.shape)}}
        axis -> {a, axis, x.shape}
      end

    {a, state} = if from == x.shape, do: {a, state}, else: emit(state, node("reshape", [a], template(x.type, from)))
    reduced = from |> Tuple.delete_at(axis)
    tie = if opts[:tie_break] == :high, do: 1, else: 0
    {idx, state} = emit(state, node(Atom.to_string(op), [a], template(t.type, reduced), %{"axes" => [axis], "tie_break" => [tie]}))
    reshape_to(idx, reduced, t, state)
  end

  defp lower_op(%T{data: %Expr{op: op, args: [x | _]}} = t, state) when op in [:reshape, :squeeze] do
    {a, state} = lower(x, state)
    emit(state, node("reshape", [a], t))
  end

  defp lower_op(%T{data: %Expr{op: :transpose, args: [x, axes]}} = t, state) do
    {a, state} = lower(x, state)
    emit(state, node("transpose", [a], t, %{"axes" => axes}))
  end

  defp lower_op(%T{data: %Expr{op: :reverse, args: [x, axes]}} = t, state) do
    {a, state} = lower(x, state)
    emit(state, node("reverse", [a], t, %{"axes" => axes}))
  end

  defp lower_op(%T{data: %Expr{op: :broadcast, args: [x, _shape, axes]}} = t, state) do
    {a, state} = operand(x, t.type, x.shape, state)
    emit(state, node("broadcast", [a], t, %{"axes" => axes}))
  end

  defp lower_op(%T{data: %Expr{op: :dot, args: [x, c1, b1, y, c2, b2]}} = t, state) do
    {a, state} = operand(x, t.type, x.shape, state)
    {b, state} = operand(y, t.type, y.shape, state)
    options = %{"lhs_contract" => c1, "rhs_contract" => c2, "lhs_batch" => b1, "rhs_batch" => b2}
    emit(state, node("dot", [a, b], t, options))
  end

  defp lower_op(%T{data: %Expr{op: :select, args: [pred, on_true, on_false]}} = t, state) do
    {p, state} = predicate(pred, t.shape, state)
    {a, state} = operand(on_true, t.type, t.shape, state)
    {b, state} = operand(on_false, t.type, t.shape, state)
    emit(state, node("select", [p, a, b], t))
  end

  defp lower_op(%T{data: %Expr{op: :clip, args: [x, lo, hi]}} = t, state) do
    {a, state} = operand(x, t.type, t.shape, state)
    {l, state} = operand(lo, t.type, t.shape, state)
    {h, state} = operand(hi, t.type, t.shape, state)
    {m, state} = emit(state, node("max", [a, l], t))
    emit(state, node("min", [m, h], t))
  end

  defp lower_op(%T{data: %Expr{op: :iota, args: [axis]}} = t, state) do
    emit(state, node("iota", [], t, %{"axes" => if(axis, do: [axis], else: [])}))
  end

  defp lower_op(%T{data: %Expr{op: :concatenate, args: [tensors, axis]}} = t, state) do
    {parts, state} = Enum.map_reduce(tensors, state, &operand(&1, t.type, &1.shape, &2))
    emit(state, node("concatenate", parts, t, %{"axes" => [axis]}))
  end

  defp lower_op(%T{data: %Expr{op: :pad, args: [x, value, config]}} = t, state) do
    {a, state} = operand(x, t.type, x.shape, state)
    {v, state} = operand(value, t.type, {}, state)
    pad(a, v, x.shape, config, t, state)
  end

  defp lower_op(%T{data: %Expr{op: :slice, args: [x, starts, lengths, strides]}} = t, state) do
    {a, state} = lower(x, state)

    {dynamic, state} =
      starts
      |> Enum.reject(&is_integer/1)
      |> Enum.map_reduce(state, &lower/2)

    marks = Enum.map(starts, fn s -> if is_integer(s), do: s, else: -9_223_372_036_854_775_808 end)
    options = %{"start_indices" => marks, "lengths" => lengths, "strides" => strides}
    emit(state, node("slice", [a | dynamic], t, options))
  end

  defp lower_op(%T{data: %Expr{op: :argsort, args: [x, opts]}} = t, state) do
    {a, state} = lower(x, state)
    emit(state, node("argsort", [a], t, sort_options(opts)))
  end

  # sort: the operand taken along the axis at its argsort's indices.
  defp lower_op(%T{data: %Expr{op: :sort, args: [x, opts]}} = t, state) do
    {a, state} = lower(x, state)
    {order, state} = emit(state, node("argsort", [a], template({:s, 64}, x.shape), sort_options(opts)))
    emit(state, node("take_along_axis", [a, order], t, %{"axes" => [opts[:axis]]}))
  end

  # eye: iota along the two last axes, equal.
  defp lower_op(%T{data: %Expr{op: :eye}} = t, state) do
    rank = tuple_size(t.shape)
    {r, state} = emit(state, node("iota", [], template({:s, 64}, t.shape), %{"axes" => [rank - 2]}))
    {c, state} = emit(state, node("iota", [], template({:s, 64}, t.shape), %{"axes" => [rank - 1]}))
    {e, state} = emit(state, node("equal", [r, c], template({:u, 8}, t.shape)))
    emit(state, node("as_type", [e], t))
  end

  # put_slice: starts that are constants are static, others dynamic.
  defp lower_op(%T{data: %Expr{op: :put_slice, args: [x, starts, update]}} = t, state) do
    {a, state} = operand(x, t.type, x.shape, state)
    {u, state} = operand(update, t.type, update.shape, state)
    {marks, dynamic} = Enum.map(starts, &start_index/1) |> Enum.unzip()
    {dyn, state} = dynamic |> Enum.reject(&is_nil/1) |> Enum.map_reduce(state, &lower/2)
    emit(state, node("put_slice", [a, u | dyn], t, %{"start_indices" => marks}))
  end

  defp lower_op(%T{data: %Expr{op: :gather, args: [x, indices, opts]}} = t, state) do
    {a, state} = lower(x, state)
    {i, state} = lower(indices, state)
    emit(state, node("gather", [a, i], t, %{"axes" => opts[:axes]}))
  end

  # indexed_add/put over every axis; on some axes, as Nxc.Expand writes it.
  defp lower_op(%T{data: %Expr{op: op, args: [target, indices, updates, opts]}} = t, state)
       when op in [:indexed_add, :indexed_put] do
    axes = opts[:axes] || Enum.to_list(0..(tuple_size(target.shape) - 1)//1)

    if axes != Enum.to_list(0..(tuple_size(target.shape) - 1)//1) do
      target = Nx.as_type(Nx.devectorize(target), t.type)
      updates = Nx.as_type(Nx.devectorize(updates), t.type)
      lower(Nxc.Expand.indexed_on_axes(op, target, Nx.devectorize(indices), updates, axes), state)
    else
      indexed(op, target, indices, updates, axes, t, state)
    end
  end

  defp lower_op(%T{data: %Expr{op: :reduce, args: [tensor, acc, opts, fun]}} = t, state) do
    [tensor, acc] = Enum.map([tensor, acc], &Nx.devectorize/1)
    lower(Nxc.Expand.reduce(t, tensor, acc, opts, fun), state)
  end

  defp lower_op(%T{data: %Expr{op: :window_reduce, args: [tensor, acc, window, opts, fun]}} = t, state) do
    [tensor, acc] = Enum.map([tensor, acc], &Nx.devectorize/1)
    lower(Nxc.Expand.window_reduce(t, tensor, acc, window, opts, fun), state)
  end

  defp lower_op(%T{data: %Expr{op: op, args: [tensor, source, init, window, opts]}} = t, state)
       when op in [:window_scatter_max, :window_scatter_min] do
    [tensor, source, init] = Enum.map([tensor, source, init], &Nx.devectorize/1)
    lower(Nxc.Expand.window_scatter(t, tensor, source, init, window, opts, op == :window_scatter_max), state)
  end

  # Windows: the padding as a pad with the reduction's identity, then the
  # window op on the padded operand.
  defp lower_op(%T{data: %Expr{op: op, args: [x, window, opts]}} = t, state)
       when op in [:window_sum, :window_product, :window_max, :window_min] do
    rank = tuple_size(x.shape)
    padding = opts[:padding] || List.duplicate({0, 0}, rank)
    {a, state} = operand(x, t.type, x.shape, state)

    {a, state} =
      if Enum.all?(padding, &(&1 == {0, 0})) do
        {a, state}
      else
        identity =
          case op do
            :window_sum -> 0
            :window_product -> 1
            :window_max -> Nx.Constants.min(t.type) |> Nx.to_number()
            :window_min -> Nx.Constants.max(t.type) |> Nx.to_number()
          end

        {v, state} = emit(state, node("constant", [], template(t.type, {})) |> Map.put("value", [number(identity)]))
        padded = Enum.zip_with(Tuple.to_list(x.shape), padding, fn d, {lo, hi} -> d + lo + hi end) |> List.to_tuple()
        options = %{"low" => Enum.map(padding, &elem(&1, 0)), "high" => Enum.map(padding, &elem(&1, 1)), "interior" => List.duplicate(0, rank)}
        emit(state, node("pad", [a, v], template(t.type, padded), options))
      end

    options = %{
      "window_dims" => Tuple.to_list(window),
      "strides" => opts[:strides] || List.duplicate(1, rank),
      "dilations" => opts[:window_dilations] || List.duplicate(1, rank)
    }

    emit(state, node(Atom.to_string(op), [a], t, options))
  end

  # conv: the operands permuted to {batch, features, spatial...}, the input
  # padded (and dilated) with zeros, nxc's conv, the result permuted back.
  defp lower_op(%T{data: %Expr{op: :conv, args: [x, k, opts]}} = t, state) do
    if (opts[:batch_group_size] || 1) != 1 do
      lower_batch_groups(t, x, k, opts, state)
    else
      lower_conv(t, x, k, opts, state)
    end
  end

  defp lower_op(%T{data: %Expr{op: :stack, args: [tensors, axis]}} = t, state) do
    {parts, state} =
      Enum.map_reduce(tensors, state, fn x, s ->
        {a, s} = operand(x, t.type, x.shape, s)
        emit(s, node("reshape", [a], template(t.type, Tuple.insert_at(x.shape, axis, 1))))
      end)

    emit(state, node("concatenate", parts, t, %{"axes" => [axis]}))
  end

  # A block (an op with a default implementation): its implementation, with
  # its parameters standing for the block's arguments.
  defp lower_op(%T{data: %Expr{op: :block, args: [_struct, in_args, impl, _fun]}}, state) do
    in_block(impl, in_args, state)
  end

  # One result of an op with several.
  defp lower_op(%T{data: %Expr{op: :elem, args: [tuple, i]}} = t, state) do
    case tuple do
      %T{data: %Expr{op: :block, args: [_struct, in_args, impl, _fun]}} when is_tuple(impl) ->
        in_block(elem(impl, i), in_args, state)

      # Metadata around a tuple (Nx's stop_grad, custom_grad... of a
      # container): its element.
      %T{data: %Expr{op: :metadata, args: [inner, _]}} when is_tuple(inner) ->
        lower(elem(inner, i), state)

      %T{data: %Expr{op: :io_call}} ->
        {{:leaves, ids}, state} = lower(tuple, state)
        {Enum.fetch!(ids, i), state}

      %T{data: %Expr{op: op}} when op in [:while, :cond] ->
        {idx, state} = lower(tuple, state)
        emit(state, node("elem", [idx], t) |> Map.put("index", i))

      %T{data: %Expr{op: op}} ->
        unsupported("Nx op #{inspect(op)}")
    end
  end

  # while: a `while` node (regions condition and body, each with one region
  # argument per state value); a single state value is its first result.
  defp lower_op(%T{data: %Expr{op: :while, args: [initial, arg, condition, body]}} = t, state) do
    inits = leaves(initial)
    args = leaves(arg)
    context = hd(args).data.context
    {init_ids, state} = Enum.map_reduce(inits, state, &lower/2)
    state = %{state | in_while: state.in_while + 1}
    {test, state} = region(args, context, [{condition, template({:u, 8}, {})}], state)
    {step, state} = region(args, context, Enum.zip(leaves(body), inits), state)
    state = %{state | in_while: state.in_while - 1}

    loop =
      node("while", init_ids, hd(inits))
      |> Map.put("results", result_types(inits))
      |> Map.put("regions", [test, step])

    {idx, state} = emit(state, loop)
    if is_tuple(initial), do: {idx, state}, else: emit(state, node("elem", [idx], t) |> Map.put("index", 0))
  end

  # cond: a chain of `cond` nodes, one per clause, the next clause (or the
  # last branch) in the else region.
  defp lower_op(%T{data: %Expr{op: :cond, args: [clauses, last]}} = t, state) do
    templates = leaves(last)
    {idx, state} = cond_chain(clauses, last, templates, state)
    if is_tuple(last), do: {idx, state}, else: emit(state, node("elem", [idx], t) |> Map.put("index", 0))
  end

  # triangular_solve: reduced to a lower-triangular system solved from the
  # left, as Nx.BinaryBackend does (transpose a, b and x for right-side
  # systems; reverse a's axes and b's and x's rows for upper-triangular
  # ones), solved in f64 by nxc's prelude (Nxc.Prelude.LinAlg.lower_solve,
  # the defn nxc's own front end compiles, traced here by Nx) one matrix
  # of the batch at a time, and rounded to the result type once.
  defp lower_op(%T{data: %Expr{op: :triangular_solve, args: [a, b, opts]}} = t, state) do
    a = Nx.devectorize(a)
    b = Nx.devectorize(b)
    batch = a.shape |> Tuple.to_list() |> Enum.drop(-2)
    count = Enum.product(batch)
    n = elem(a.shape, tuple_size(a.shape) - 1)
    left? = Keyword.get(opts, :left_side, true)
    lower? = Keyword.get(opts, :lower, true)
    # nxc's triangular solve is written for real matrices (in f64): a complex
    # one would lose its imaginary parts.
    if match?({:c, _}, t.type) or match?({:c, _}, a.type) or match?({:c, _}, b.type),
      do: unsupported("triangular_solve of complex matrices")
    transpose? = opts[:transform_a] == :transpose
    trans_a? = left? == transpose?
    reverse_a? = left? == (lower? == transpose?)
    vector? = tuple_size(b.shape) == length(batch) + 1
    trans_b? = not left? and not vector?

    {ai, state} = operand(a, {:f, 64}, a.shape, state)
    {bi, state} = operand(b, {:f, 64}, b.shape, state)
    b_inner = b.shape |> Tuple.to_list() |> Enum.drop(length(batch))
    {ai, state} = emit(state, node("reshape", [ai], template({:f, 64}, {count, n, n})))
    {bi, state} = emit(state, node("reshape", [bi], template({:f, 64}, List.to_tuple([count | b_inner]))))

    {solved, state} =
      Enum.map_reduce(0..(count - 1), state, fn k, state ->
        {am, state} = batch_item(ai, k, [n, n], state)
        {bm, state} = batch_item(bi, k, b_inner, state)
        {am, state} = if trans_a?, do: emit(state, node("transpose", [am], template({:f, 64}, {n, n}), %{"axes" => [1, 0]})), else: {am, state}
        {am, state} = if reverse_a?, do: emit(state, node("reverse", [am], template({:f, 64}, {n, n}), %{"axes" => [0, 1]})), else: {am, state}

        {bm, m, state} =
          case b_inner do
            [_] ->
              {bm, 1, state}

            [r, c] when trans_b? ->
              {bm, state} = emit(state, node("transpose", [bm], template({:f, 64}, {c, r}), %{"axes" => [1, 0]}))
              {bm, r, state}

            [_, c] ->
              {bm, c, state}
          end

        {bm, state} = emit(state, node("reshape", [bm], template({:f, 64}, {n, m})))
        {bm, state} = if reverse_a?, do: emit(state, node("reverse", [bm], template({:f, 64}, {n, m}), %{"axes" => [0]})), else: {bm, state}

        solve = Nx.Defn.debug_expr_apply(&Nxc.Prelude.LinAlg.lower_solve/2, [Nx.template({n, n}, :f64), Nx.template({n, m}, :f64)])
        {x, state} = with_root_params(solve, [am, bm], state)
        {x, state} = if reverse_a?, do: emit(state, node("reverse", [x], template({:f, 64}, {n, m}), %{"axes" => [0]})), else: {x, state}

        case b_inner do
          [_] -> emit(state, node("reshape", [x], template({:f, 64}, {1, n})))
          [r, c] when trans_b? ->
            {x, state} = emit(state, node("transpose", [x], template({:f, 64}, {r, c}), %{"axes" => [1, 0]}))
            emit(state, node("reshape", [x], template({:f, 64}, {1, r, c})))
          [r, c] -> emit(state, node("reshape", [x], template({:f, 64}, {1, r, c})))
        end
      end)

    full = List.to_tuple([count | b_inner])
    {x, state} = if count == 1, do: {hd(solved), state}, else: emit(state, node("concatenate", solved, template({:f, 64}, full), %{"axes" => [0]}))
    {x, state} = emit(state, node("reshape", [x], template({:f, 64}, t.shape)))
    if t.type == {:f, 64}, do: {x, state}, else: emit(state, node("as_type", [x], t))
  end

  defp lower_op(%T{data: %Expr{op: op}}, _state), do: unsupported("Nx op #{inspect(op)}")

  # A conv with batch groups (Nx's gradient of a feature-grouped conv):
  # one conv per group, as Nxc.Expand writes it.
  defp lower_batch_groups(t, x, k, opts, state) do
    [x, k] = Enum.map([x, k], &Nx.devectorize/1)
    lower(Nxc.Expand.conv_batch_groups(t, x, k, opts), state)
  end

  defp lower_conv(t, x, k, opts, state) do
    rank = tuple_size(x.shape)
    spatial = rank - 2
    {a, state} = operand(x, t.type, x.shape, state)
    {w, state} = operand(k, t.type, k.shape, state)
    {a, xs, state} = permute(a, x.shape, opts[:input_permutation], t.type, state)
    {w, _ks, state} = permute(w, k.shape, opts[:kernel_permutation], t.type, state)
    padding = opts[:padding] || List.duplicate({0, 0}, spatial)
    dilation = opts[:input_dilation] || List.duplicate(1, spatial)

    {a, state} =
      if Enum.all?(padding, &(&1 == {0, 0})) and Enum.all?(dilation, &(&1 == 1)) do
        {a, state}
      else
        {z, state} = emit(state, node("constant", [], template(t.type, {})) |> Map.put("value", [0]))
        lo = [0, 0] ++ Enum.map(padding, &elem(&1, 0))
        hi = [0, 0] ++ Enum.map(padding, &elem(&1, 1))
        interior = [0, 0] ++ Enum.map(dilation, &(&1 - 1))

        padded =
          Enum.zip([Tuple.to_list(xs), lo, hi, interior])
          |> Enum.map(fn {d, l, h, i} -> if(d == 0, do: 0, else: d + (d - 1) * i) + l + h end)
          |> List.to_tuple()

        pad(a, z, xs, Enum.zip([lo, hi, interior]), template(t.type, padded), state)
      end

    # Nx applies the output permutation's inverse to the canonical result.
    out_perm = opts[:output_permutation] || Enum.to_list(0..(rank - 1))
    back = out_perm |> Enum.with_index() |> Enum.sort() |> Enum.map(&elem(&1, 1))
    canonical = Enum.map(out_perm, &elem(t.shape, &1)) |> List.to_tuple()

    options = %{
      "strides" => opts[:strides] || List.duplicate(1, spatial),
      "kernel_dilation" => opts[:kernel_dilation] || List.duplicate(1, spatial),
      "feature_groups" => [opts[:feature_group_size] || 1]
    }

    {c, state} = emit(state, node("conv", [a, w], template(t.type, canonical), options))
    if back == Enum.to_list(0..(rank - 1)), do: {c, state}, else: emit(state, node("transpose", [c], t, %{"axes" => back}))
  end

  # Matrix k of a {count, ...} operand, as a tensor of shape `inner`.
  defp batch_item(idx, k, inner, state) do
    options = %{"start_indices" => [k | Enum.map(inner, fn _ -> 0 end)], "lengths" => [1 | inner], "strides" => List.duplicate(1, length(inner) + 1)}
    {s, state} = emit(state, node("slice", [idx], template({:f, 64}, List.to_tuple([1 | inner])), options))
    emit(state, node("reshape", [s], template({:f, 64}, List.to_tuple(inner))))
  end

  # An expression traced apart (Nx.Defn.debug_expr_apply), its parameters
  # standing for the nodes `args`.
  defp with_root_params(expr, args, state) do
    saved = state.scopes
    {idx, state} = lower(expr, %{state | scopes: Map.put(saved, :root, args)})
    {idx, %{state | scopes: saved}}
  end

  # A hook inside a branch runs only when its branch does: its values (and
  # the flags of the conds it is nested in) become more results of the cond,
  # the other branch yielding zeros in their place, with one more flag, 1
  # where the branch ran. The hook is then the cond's: its leaves and flags
  # are elems of it, and it runs when every flag is 1.
  defp cond_chain([{pred, branch} | rest], last, templates, state) do
    {p, state} = predicate(pred, {}, state)
    then_branch = &region([], nil, Enum.zip(leaves(branch), templates), &1)
    else_branch = &else_region(rest, last, templates, &1)

    # Which hooks each branch holds: found by lowering it once aside (the
    # state is a value), so that the placeholders for the other branch can
    # come first, outside both.
    {then_hooks, else_hooks} =
      if state.hook_mode == :drop,
        do: {[], []},
        else: {hooks_in(then_branch, state), hooks_in(else_branch, state)}

    {zeros, state} = Enum.map_reduce(then_hooks ++ else_hooks, state, &placeholders/2)
    {then_zeros, else_zeros} = Enum.split(zeros, length(then_hooks))
    {one, state} = if zeros == [], do: {nil, state}, else: flag_constant(1, state)
    {zero, state} = if zeros == [], do: {nil, state}, else: flag_constant(0, state)

    {then, state, then_found} = with_hooks(then_branch, state)
    {otherwise, state, else_found} = with_hooks(else_branch, state)
    then = Map.update!(then, "results", &(&1 ++ lifted(then_found, one) ++ Enum.flat_map(else_zeros, fn z -> z ++ [zero] end)))
    otherwise = Map.update!(otherwise, "results", &(&1 ++ Enum.flat_map(then_zeros, fn z -> z ++ [zero] end) ++ lifted(else_found, one)))

    found = then_found ++ else_found
    extra = found |> Enum.flat_map(&hook_templates/1) |> result_types()

    choice =
      node("cond", [p], hd(templates))
      |> Map.put("results", result_types(templates) ++ extra)
      |> Map.put("regions", [then, otherwise])

    {idx, state} = emit(state, choice)

    # The hooks, now the cond's: their leaves and flags are elems of it.
    {hooks, {state, _}} =
      Enum.map_reduce(found, {state, length(templates)}, fn h, {state, at} ->
        tpls = hook_templates(h)

        {ids, state} =
          tpls
          |> Enum.with_index(at)
          |> Enum.map_reduce(state, fn {tpl, i}, s -> emit(s, node("elem", [idx], tpl) |> Map.put("index", i)) end)

        {values, flags} = Enum.split(ids, length(h.ids))
        {%{h | ids: values, flags: flags}, {state, at + length(tpls)}}
      end)

    {idx, %{state | hooks: Enum.reverse(hooks) ++ state.hooks}}
  end

  defp else_region([], last, templates, state), do: region([], nil, Enum.zip(leaves(last), templates), state)

  # The inner chain, inside the else region, and its results.
  defp else_region(rest, last, templates, state) do
    state = %{state | regions: [[] | state.regions]}
    saved = state.ids
    {inner, state} = cond_chain(rest, last, templates, state)

    {elems, state} =
      templates
      |> Enum.with_index()
      |> Enum.map_reduce(state, fn {tpl, i}, s -> emit(s, node("elem", [inner], tpl) |> Map.put("index", i)) end)

    [nodes | outer] = state.regions
    {%{"args" => [], "nodes" => Enum.reverse(nodes), "results" => elems}, %{state | regions: outer, ids: saved}}
  end

  # The hooks a branch records, when lowered from `state` (which is kept).
  defp hooks_in(branch, state) do
    {_, after_branch} = branch.(%{state | hooks: []})
    Enum.reverse(after_branch.hooks)
  end

  # The branch lowered, and the hooks it recorded (taken out of the state).
  defp with_hooks(branch, state) do
    outer = state.hooks
    {region, state} = branch.(%{state | hooks: []})
    {region, %{state | hooks: outer}, Enum.reverse(state.hooks)}
  end

  defp lifted(hooks, one), do: Enum.flat_map(hooks, &(&1.ids ++ &1.flags ++ [one]))

  # The templates of a hook's results as a cond carries them: its leaves,
  # its flags and the new one.
  defp hook_templates(h) do
    Nx.Defn.Composite.flatten_list([h.container]) ++ List.duplicate(template({:u, 8}, {}), length(h.flags) + 1)
  end

  # Zeros standing for a hook's leaves and flags in the branch without it.
  defp placeholders(h, state) do
    leaves = Nx.Defn.Composite.flatten_list([h.container]) ++ List.duplicate(template({:u, 8}, {}), length(h.flags))

    Enum.map_reduce(leaves, state, fn leaf, s ->
      {z, s} = emit(s, node("constant", [], template(leaf.type, {})) |> Map.put("value", [0]))
      if leaf.shape == {}, do: {z, s}, else: emit(s, node("broadcast", [z], leaf, %{"axes" => []}))
    end)
  end

  defp flag_constant(v, state), do: emit(state, node("constant", [], template({:u, 8}, {})) |> Map.put("value", [v]))

  # A pad node by Nx's {low, high, interior} per axis, from `shape` to `t`'s
  # shape: negative low or high (which Nx allows: they crop) as a pad by
  # the positive parts, then a slice.
  defp pad(a, v, shape, config, t, state) do
    lo = Enum.map(config, &max(elem(&1, 0), 0))
    hi = Enum.map(config, &max(elem(&1, 1), 0))
    interior = Enum.map(config, &elem(&1, 2))

    if Enum.all?(config, fn {l, h, _} -> l >= 0 and h >= 0 end) do
      emit(state, node("pad", [a, v], t, %{"low" => lo, "high" => hi, "interior" => interior}))
    else
      padded =
        Enum.zip([Tuple.to_list(shape), lo, hi, interior])
        |> Enum.map(fn {d, l, h, i} -> if(d == 0, do: 0, else: d + (d - 1) * i) + l + h end)

      {p, state} =
        if Enum.all?(lo ++ hi ++ interior, &(&1 == 0)),
          do: {a, state},
          else: emit(state, node("pad", [a, v], template(t.type, List.to_tuple(padded)), %{"low" => lo, "high" => hi, "interior" => interior}))

      starts = Enum.map(config, fn {l, _, _} -> max(-l, 0) end)
      options = %{"start_indices" => starts, "lengths" => shape(t), "strides" => List.duplicate(1, length(starts))}
      emit(state, node("slice", [p], t, options))
    end
  end

  defp indexed(op, target, indices, updates, axes, t, state) do
    {a, state} = operand(target, t.type, target.shape, state)
    {i, state} = lower(indices, state)
    {u, state} = operand(updates, t.type, updates.shape, state)
    emit(state, node(Atom.to_string(op), [a, i, u], t, %{"axes" => axes}))
  end

  # A start of put_slice: {static index, nil} or {INT64_MIN, tensor}.
  defp start_index(%T{data: %Expr{op: :constant, args: [n]}}) when is_integer(n), do: {n, nil}
  defp start_index(n) when is_integer(n), do: {n, nil}
  defp start_index(%T{} = t), do: {-9_223_372_036_854_775_808, t}

  # A transpose by `perm` (nil or the identity: none).
  defp permute(idx, shape, perm, type, state) do
    rank = tuple_size(shape)

    if perm == nil or perm == Enum.to_list(0..(rank - 1)) do
      {idx, shape, state}
    else
      permuted = Enum.map(perm, &elem(shape, &1)) |> List.to_tuple()
      {p, state} = emit(state, node("transpose", [idx], template(type, permuted), %{"axes" => perm}))
      {p, permuted, state}
    end
  end

  defp sort_options(opts) do
    %{"axes" => [opts[:axis]], "direction" => [if(opts[:direction] == :desc, do: 1, else: 0)]}
  end

  defp in_block(%T{data: %Expr{context: context}} = impl, in_args, state) do
    {args, state} =
      in_args
      |> Enum.take_while(&(not is_list(&1)))
      |> Enum.map_reduce(state, &lower/2)

    saved = state.scopes
    {idx, state} = lower(impl, %{state | scopes: Map.put(saved, context, args)})
    {idx, %{state | scopes: saved}}
  end

  defp predicate(pred, shape, state) do
    if pred.type == {:u, 8} do
      operand(pred, {:u, 8}, shape, state)
    else
      {p, state} = operand(pred, pred.type, shape, state)
      {z, state} = emit(state, node("constant", [], template(pred.type, {})) |> Map.put("value", [0]))
      {z, state} = emit(state, node("broadcast", [z], template(pred.type, shape), %{"axes" => []}))
      emit(state, node("not_equal", [p, z], template({:u, 8}, shape)))
    end
  end

  defp reshape_to(idx, shape, t, state) do
    if shape == t.shape, do: {idx, state}, else: emit(state, node("reshape", [idx], t))
  end

  ## Values

  defp type({:f8_e4m3fn, 8}), do: "f8_e4m3fn"
  defp type({kind, bits}), do: "#{kind}#{bits}"

  defp shape(%T{shape: shape}), do: Tuple.to_list(shape)

  defp number(:nan), do: "nan"
  defp number(:infinity), do: "inf"
  defp number(:neg_infinity), do: "-inf"
  defp number(%Complex{re: re, im: im}), do: [number(re), number(im)]
  defp number(v) when is_number(v), do: v

  @doc false
  # A .npy file of the tensor (bf16 as f32, exactly, and the f8 types as
  # their bytes, as the format asks; complex as NumPy's complex64/128).
  def npy(tensor) do
    tensor = if tensor.type == {:bf, 16}, do: Nx.as_type(tensor, :f32), else: tensor

    descr =
      case tensor.type do
        {:f, 8} -> "|u1"
        {:f8_e4m3fn, 8} -> "|u1"
        {:c, 64} -> "<c8"
        {:c, 128} -> "<c16"
        {:f, 16} -> "<f2"
        {:f, 32} -> "<f4"
        {:f, 64} -> "<f8"
        {:s, 8} -> "|i1"
        {:u, 8} -> "|u1"
        {:s, b} -> "<i#{div(b, 8)}"
        {:u, b} -> "<u#{div(b, 8)}"
        other -> unsupported("constants of type #{inspect(other)}")
      end

    dims = tensor.shape |> Tuple.to_list()
    shape = case dims do
      [d] -> "(#{d},)"
      ds -> "(" <> Enum.join(ds, ", ") <> ")"
    end

    header = "{'descr': '#{descr}', 'fortran_order': False, 'shape': #{shape}, }"
    pad = 64 - rem(10 + byte_size(header) + 1, 64)
    header = header <> String.duplicate(" ", rem(pad, 64)) <> "\n"
    ["\x93NUMPY", <<1, 0, byte_size(header)::little-16>>, header, Nx.to_binary(tensor)]
  end

  defp unsupported(what), do: raise(Nxc.UnsupportedError, what)
end

defmodule Nxc.UnsupportedError do
  @moduledoc "Raised for a part of a defn function that Nxc does not compile yet."
  defexception [:message]

  @impl true
  def exception(what), do: %__MODULE__{message: "Nxc cannot compile #{what} yet"}
end
