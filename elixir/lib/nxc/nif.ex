defmodule Nxc.NIF do
  @moduledoc false
  # c_src/nxc_nif.c: loads shared objects compiled by nxc and calls their
  # FN_packed entry points.
  @on_load :load_nif

  def load_nif do
    :erlang.load_nif(:filename.join(:code.priv_dir(:nxc), ~c"nxc_nif"), 0)
  end

  def load(_path), do: :erlang.nif_error(:not_loaded)
  def workspace_size(_library, _symbol), do: :erlang.nif_error(:not_loaded)
  def call(_library, _symbol, _inputs, _input_bytes, _output_bytes, _workspace_bytes), do: :erlang.nif_error(:not_loaded)
  def call_dirty(_library, _symbol, _inputs, _input_bytes, _output_bytes, _workspace_bytes), do: :erlang.nif_error(:not_loaded)
end
