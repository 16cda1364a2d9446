Application.ensure_all_started(:nx)
Code.require_file("npy.exs", __DIR__)
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
