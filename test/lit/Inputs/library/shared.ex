# Helpers in the style of a library's shared module (test/lit/library-code.nx).
defmodule Lib.Shared do
  import Nx.Defn

  # Clauses chosen by guards and patterns, as library helpers are written.
  deftransform wrap_axes(axes) when is_integer(axes), do: [axes]
  deftransform wrap_axes([_ | _] = axes), do: axes
  deftransform wrap_axes(nil), do: []

  deftransform describe(%{scale: s, shift: b}), do: "scale #{s}, shift #{b}"
end
