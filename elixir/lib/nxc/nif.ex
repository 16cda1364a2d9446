defmodule Nxc.NIF do
  @moduledoc false
  # c_src/nxc_nif.c: loads shared objects compiled by nxc and calls their
  # FN_packed entry points.
  @on_load :load_nif

  # Without the NIF (built where there was no C compiler) the module still
  # loads: its functions raise, and modules imported with their own NIF,
  # which do not use it, work.
  def load_nif do
    case :erlang.load_nif(:filename.join(:code.priv_dir(:nxc), ~c"nxc_nif"), 0) do
      :ok -> :ok
      {:error, _} -> :ok
    end
  end

  def load(_path), do: :erlang.nif_error(:not_loaded)
  def workspace_size(_library, _symbol), do: :erlang.nif_error(:not_loaded)
  def call(_library, _symbol, _inputs, _input_bytes, _output_bytes, _workspace_bytes), do: :erlang.nif_error(:not_loaded)
  def call_dirty(_library, _symbol, _inputs, _input_bytes, _output_bytes, _workspace_bytes), do: :erlang.nif_error(:not_loaded)
end
