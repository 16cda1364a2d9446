# Evaluates nxdiff cases with real Nx (Nx.Defn.Evaluator on Nx.BinaryBackend).
#
#   elixir -pa <Nx's ebin folders> oracle.exs CASES.jsonl OUT.jsonl
#
# Each input line is a case written by nx_diff.py (`generate`): {"id", "source", "inputs":
# [{"type", "shape", "data"}]}, data being the little-endian bytes in base64. Each output line
# is {"id", "leaves": [{"type", "shape", "data"}]} for the result's leaves (depth-first), or
# {"id", "error": MESSAGE} when Nx raised. Needs Elixir 1.18 (JSON).

[cases_path, out_path] = System.argv()
Application.ensure_all_started(:nx)

type_of = fn
  "bf16" -> {:bf, 16}
  <<k::binary-size(1), bits::binary>> -> {String.to_atom(k), String.to_integer(bits)}
end

name_of = fn {k, b} -> "#{k}#{b}" end

leaves = fn
  leaves, t when is_tuple(t) and not is_struct(t) -> t |> Tuple.to_list() |> Enum.flat_map(&leaves.(leaves, &1))
  _, t -> [t]
end

encode_leaf = fn t ->
  %{"type" => name_of.(Nx.type(t)), "shape" => Tuple.to_list(Nx.shape(t)),
    "data" => Base.encode64(Nx.to_binary(t))}
end

out = File.open!(out_path, [:write, :utf8])

cases_path
|> File.stream!()
|> Enum.each(fn line ->
  c = JSON.decode!(line)
  id = c["id"]
  result =
    try do
      module = Module.concat(NxDiff, "C#{id}")
      source = String.replace(c["source"], "defmodule F do", "defmodule #{inspect(module)} do", global: false)
      Code.compile_string(source)
      args =
        for i <- c["inputs"] do
          Nx.from_binary(Base.decode64!(i["data"]), type_of.(i["type"])) |> Nx.reshape(List.to_tuple(i["shape"]))
        end
      r = apply(module, :f, args)
      :code.purge(module)
      :code.delete(module)
      %{"id" => id, "leaves" => Enum.map(leaves.(leaves, r), encode_leaf)}
    rescue
      e -> %{"id" => id, "error" => Exception.message(e) |> String.slice(0, 300)}
    end
  IO.write(out, JSON.encode!(result) <> "\n")
end)

File.close(out)
