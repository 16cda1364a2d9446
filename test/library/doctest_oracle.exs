# Real Nx's side of doctests.py --elixir: runs a library's doctests (their
# expressions, as doctests.py reads them) and writes what each expression's
# value inspects to, so that nxc's results are compared with Nx's rather than
# with the documented ones (which may be stale: written when Nx printed 16
# digits, or before an algorithm changed).
#
# Usage: elixir -pa ... doctest_oracle.exs IN.json OUT.json
#   IN:  [{"id": "rel:line", "exprs": ["x = ...", ...]}, ...]
#   OUT: {"rel:line": {"outputs": ["#Nx.Tensor<...>", ...]}
#         or {"error": "** (Module) message", "at": index}}
# Each test runs in a binding of its own, its expressions in order (as iex
# runs them); the first that raises ends the test, reported with its index.
Application.ensure_all_started(:nx)
[input, output] = System.argv()

results =
  input
  |> File.read!()
  |> JSON.decode!()
  |> Map.new(fn %{"id" => id, "exprs" => exprs} ->
    {outputs, _binding, error} =
      exprs
      |> Enum.with_index()
      |> Enum.reduce_while({[], [], nil}, fn {expr, index}, {outputs, binding, nil} ->
        try do
          {value, binding} = Code.eval_string(expr, binding)
          {:cont, {[inspect(value) | outputs], binding, nil}}
        rescue
          e ->
            message = "** (#{inspect(e.__struct__)}) #{Exception.message(e)}"
            {:halt, {outputs, binding, %{"error" => message, "at" => index}}}
        end
      end)

    {id, error || %{"outputs" => Enum.reverse(outputs)}}
  end)

File.write!(output, JSON.encode!(results))
