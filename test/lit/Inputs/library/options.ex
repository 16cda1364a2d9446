# A custom NimbleOptions validator, as libraries write them (test/lit/library-code.nx).
defmodule Lib.Options do
  def positive(value) do
    if is_number(value) and value > 0 do
      {:ok, value}
    else
      {:error, "expected a positive number, got: #{inspect(value)}"}
    end
  end
end
