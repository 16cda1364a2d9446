defmodule Nxc.JSON do
  @moduledoc false
  # The few JSON values a graph file holds (maps with string keys, lists,
  # strings, integers, floats, booleans, nil), written without a dependency.

  def encode(value), do: IO.iodata_to_binary(value(value))

  defp value(nil), do: "null"
  defp value(true), do: "true"
  defp value(false), do: "false"
  defp value(v) when is_integer(v), do: Integer.to_string(v)
  defp value(v) when is_float(v), do: :erlang.float_to_binary(v, [:short])
  defp value(v) when is_binary(v), do: string(v)
  defp value(v) when is_atom(v), do: string(Atom.to_string(v))
  defp value(v) when is_list(v), do: ["[", Enum.map_intersperse(v, ",", &value/1), "]"]

  defp value(%{} = v) do
    pairs = v |> Enum.sort_by(&elem(&1, 0)) |> Enum.map_intersperse(",", fn {k, x} -> [string(to_string(k)), ":", value(x)] end)
    ["{", pairs, "}"]
  end

  defp string(s) do
    escaped =
      for <<c::utf8 <- s>>, into: "" do
        case c do
          ?" -> "\\\""
          ?\\ -> "\\\\"
          ?\n -> "\\n"
          ?\r -> "\\r"
          ?\t -> "\\t"
          c when c < 0x20 -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
          c -> <<c::utf8>>
        end
      end

    ["\"", escaped, "\""]
  end
end
