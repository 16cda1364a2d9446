Application.ensure_all_started(:nx)
defmodule Npy do
  def npy(t) do
    descr = case t.type do {:f, 32} -> "<f4"; {:f, 64} -> "<f8"; {:s, 32} -> "<i4"; {:s, 64} -> "<i8"; {:u, 32} -> "<u4"; {:u, 8} -> "|u1" end
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
  def leaves(m, prefix) when is_map(m), do: m |> Enum.sort() |> Enum.flat_map(fn {k, v} -> leaves(v, join(prefix, k)) end)
  def leaves(t, prefix) when is_tuple(t), do: t |> Tuple.to_list() |> Enum.with_index() |> Enum.flat_map(fn {v, i} -> leaves(v, join(prefix, i)) end)
  defp join(nil, k), do: "#{k}"
  defp join(p, k), do: "#{p}.#{k}"
  def template(%Nx.Tensor{type: {k, b}, shape: s}), do: "#{k}#{b}[#{s |> Tuple.to_list() |> Enum.join(",")}]"
  def template(n) when is_integer(n), do: "s32[]"
  def template(n) when is_float(n), do: "f32[]"
  def template(m) when is_map(m), do: "%{" <> (m |> Enum.sort() |> Enum.map(fn {k, v} -> "#{k}: #{template(v)}" end) |> Enum.join(", ")) <> "}"
  def template(t) when is_tuple(t), do: "{" <> (t |> Tuple.to_list() |> Enum.map(&template/1) |> Enum.join(", ")) <> "}"
  def write(path, container) do
    files = for {name, t} <- leaves(container, nil), do: {String.to_charlist(name <> ".npy"), npy(t)}
    {:ok, _} = :zip.create(String.to_charlist(path), files)
  end
end
key = Nx.Random.key(7)
{w, key} = Nx.Random.uniform(key, -1.0, 1.0, shape: {3})
{b, key} = Nx.Random.uniform(key, -1.0, 1.0, shape: {2})
{gw, key} = Nx.Random.uniform(key, -0.5, 0.5, shape: {3})
{gb, _key} = Nx.Random.uniform(key, -0.5, 0.5, shape: {2})
params = %{w: w, b: b}
x = %{w: gw, b: gb}
cases = [
  {"scale_by_adam", &Polaris.Updates.scale_by_adam/0},
  {"scale_by_rss", &Polaris.Updates.scale_by_rss/0},
  {"scale_by_rms", &Polaris.Updates.scale_by_rms/0},
  {"scale_by_belief", &Polaris.Updates.scale_by_belief/0},
  {"scale_by_stddev", &Polaris.Updates.scale_by_stddev/0},
  {"scale_by_radam", &Polaris.Updates.scale_by_radam/0},
  {"trace", &Polaris.Updates.trace/0},
  {"scale_by_yogi", &Polaris.Updates.scale_by_yogi/0},
  {"clip", &Polaris.Updates.clip/0},
  {"clip_by_global_norm", &Polaris.Updates.clip_by_global_norm/0},
  {"centralize", &Polaris.Updates.centralize/0},
]
for {name, make} <- cases do
  {init_fn, apply_fn} = make.()
  states = init_fn.(params)
  # Two steps: the second from the state the first returned.
  {_, states} = apply_fn.(x, states, params)
  {out, new_states} = apply_fn.(x, states, params)
  File.mkdir_p!(name)
  Npy.write("#{name}/x.npz", x); Npy.write("#{name}/params.npz", params)
  stateful = tuple_size(states) == 1
  if stateful, do: Npy.write("#{name}/state.npz", elem(states, 0))
  Npy.write("#{name}/want.npz", if(stateful, do: {out, elem(new_states, 0)}, else: out))
  File.write!("#{name}/templates", Enum.join([Npy.template(x), (if stateful, do: Npy.template(elem(states, 0)), else: ""), Npy.template(params)], "\n"))
end
