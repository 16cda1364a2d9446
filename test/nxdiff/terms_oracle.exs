# Real Nx's side of terms_diff.py: compiles each generated module, calls its
# f/2 on the case's input with the case's options, and writes each result
# leaf (a map of tensors) as {dtype, shape, data}, or the exception.
# Usage: elixir -pa <Nx's ebin folders> terms_oracle.exs cases.jsonl nx.jsonl
Application.ensure_all_started(:nx)
[input, output] = System.argv()

dtype = fn
  {:f, 32} -> "float32"; {:f, 64} -> "float64"; {:s, 32} -> "int32"; {:s, 64} -> "int64"
  {:u, 8} -> "uint8"; {:s, 8} -> "int8"; {:u, 32} -> "uint32"; {:u, 64} -> "uint64"
end
number = fn
  :nan -> "NaN"; :infinity -> "Infinity"; :neg_infinity -> "-Infinity"; x -> x
end

lines =
  input
  |> File.stream!()
  |> Enum.map(fn line ->
    case_ = JSON.decode!(line)
    result =
      try do
        [{module, _}] = Code.compile_string(case_["source"])
        {opts, _} = Code.eval_string("[" <> case_["call"] <> "]")
        x = Nx.tensor(case_["input"], type: :f32) |> Nx.reshape(List.to_tuple(case_["shape"]))
        out = apply(module, :f, [x, opts])
        leaves =
          Map.new(out, fn {k, t} ->
            t = Nx.tensor(t)
            {Atom.to_string(k),
             %{"dtype" => dtype.(t.type), "shape" => Tuple.to_list(t.shape),
               "data" => t |> Nx.to_flat_list() |> Enum.map(number)}}
          end)
        %{"id" => case_["id"], "result" => leaves}
      rescue
        e -> %{"id" => case_["id"], "error" => Exception.message(e)}
      end
    JSON.encode!(result)
  end)

File.write!(output, Enum.join(lines, "\n") <> "\n")
