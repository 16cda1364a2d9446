# Nx's side of polaris.sh: Polaris's public API as users call it. Each case
# is one update transform or optimizer, built by its public constructor
# (`Polaris.Optimizers.adam(learning_rate: 0.01)`), initialized on a %{w, b}
# parameter map and run for two steps. Written per case into a directory of
# its own: case.ex (the module nxc compiles: `init` and `update` call the
# constructor's two functions), x.npz (the gradients), params.npz, init.npz
# (the state init returns), state.npz (the state after the first step, the
# second step's input) and want.npz (the second step's {updates, state}),
# templates (x, params, state); stateless transforms (an empty state) get an
# `update` without the state argument. The schedules, built by their public
# constructors too, go to schedules.ex (one function per case) and
# schedules.txt (name, step, Nx's value).
Application.ensure_all_started(:nx)
Code.require_file("npy.exs", __DIR__)
key = Nx.Random.key(7)
{w, key} = Nx.Random.uniform(key, -1.0, 1.0, shape: {3})
{b, key} = Nx.Random.uniform(key, -1.0, 1.0, shape: {2})
{gw, key} = Nx.Random.uniform(key, -0.5, 0.5, shape: {3})
{gb, _key} = Nx.Random.uniform(key, -0.5, 0.5, shape: {2})
params = %{w: w, b: b}
x = %{w: gw, b: gb}

o = "Polaris.Optimizers"
u = "Polaris.Updates"
constructors =
  for(f <- ~w(adabelief adagrad adam adamw lamb radam rmsprop sgd yogi), do: "#{o}.#{f}(learning_rate: 0.01)") ++
    [
      "#{o}.noisy_sgd(learning_rate: 0.01, seed: 5)",
      "#{o}.rmsprop(learning_rate: 0.01, centered: true, momentum: 0.9)",
      "#{o}.sgd(learning_rate: 0.01, momentum: 0.9, nesterov: true)",
      "#{o}.adamw(learning_rate: 0.01, decay: 0.1)",
      "#{u}.scale(0.5)",
      "#{u}.scale_by_state(0.5)",
      "#{u}.scale_by_adam()",
      "#{u}.scale_by_adam(b1: 0.8, eps_root: 1.0e-4)",
      "#{u}.scale_by_rss()",
      "#{u}.scale_by_rms()",
      "#{u}.scale_by_belief()",
      "#{u}.scale_by_stddev()",
      "#{u}.scale_by_schedule(Polaris.Schedules.exponential_decay(0.1, transition_steps: 1))",
      "#{u}.scale_by_radam()",
      "#{u}.scale_by_trust_ratio()",
      "#{u}.scale_by_yogi()",
      "#{u}.trace()",
      "#{u}.trace(nesterov: true, decay: 0.5)",
      "#{u}.clip()",
      "#{u}.clip(delta: 0.1)",
      "#{u}.clip_by_global_norm(max_norm: 0.1)",
      "#{u}.centralize()",
      "#{u}.add_decayed_weights(decay: 0.1)",
      "#{u}.add_noise(seed: 5)",
      "#{u}.identity()",
      "#{u}.identity(#{u}.scale_by_rms())",
      "#{u}.compose(#{u}.scale_by_adam(), #{u}.scale(-0.01))",
      "#{u}.scale_by_adam() |> #{u}.scale(-0.01)",
      "#{u}.stateless(fn updates, _params -> Map.new(updates, fn {k, v} -> {k, Nx.negate(v)} end) end)",
      "#{u}.stateful(fn _params -> %{n: Nx.tensor(0)} end, fn updates, %{n: n}, _params -> " <>
        "{Map.new(updates, fn {k, v} -> {k, Nx.multiply(v, Nx.add(n, 1))} end), %{n: Nx.add(n, 1)}} end)",
      "#{u}.accumulate_gradients(1)",
      "#{u}.accumulate_gradients(#{u}.scale_by_adam(), 2)"
    ]

for {text, i} <- Enum.with_index(constructors) do
  {{init_fn, apply_fn}, _} = Code.eval_string(text)
  state0 = init_fn.(params)
  {_, state1} = apply_fn.(x, state0, params)
  want = apply_fn.(x, state1, params)
  dir = "case#{i}"
  File.mkdir_p!(dir)
  File.write!("#{dir}/constructor", text)
  Npy.write("#{dir}/x.npz", x)
  Npy.write("#{dir}/params.npz", params)
  stateless = Npy.leaves(state0, nil) == []
  module =
    if stateless do
      "  deftransform update(x, params), do: elem(#{text}, 1).(x, {}, params)\n"
    else
      Npy.write("#{dir}/init.npz", state0)
      Npy.write("#{dir}/state.npz", state1)
      "  deftransform init(params), do: elem(#{text}, 0).(params)\n" <>
        "  deftransform update(x, state, params), do: elem(#{text}, 1).(x, state, params)\n"
    end
  File.write!("#{dir}/case.ex", "defmodule Case do\n  import Nx.Defn\n#{module}end\n")
  Npy.write("#{dir}/want.npz", want)
  state_template = if stateless, do: "", else: Npy.template(state1)
  File.write!("#{dir}/templates", Enum.join([Npy.template(x), Npy.template(params), state_template], "\n"))
end

# apply_updates, the one defn of Polaris's API, on its own, with a model
# state that replaces b (Nx 0.13.1 cannot take its default, a nil state, as
# an argument).
File.mkdir_p!("apply_updates")
Npy.write("apply_updates/params.npz", params)
Npy.write("apply_updates/x.npz", x)
Npy.write("apply_updates/state.npz", %{b: gb})
Npy.write("apply_updates/want.npz", Polaris.Updates.apply_updates(params, x, %{b: gb}))
File.write!("apply_updates/templates", Npy.template(params) <> "\n" <> Npy.template(%{b: gb}))

s = "Polaris.Schedules"
schedules = [
  "#{s}.linear_decay(1.0e-2)",
  "#{s}.linear_decay(1.0e-2, warmup: 10, steps: 100)",
  "#{s}.exponential_decay(1.0e-2)",
  "#{s}.exponential_decay(1.0e-2, transition_begin: 3, staircase: true, decay_rate: 0.5, transition_steps: 7)",
  "#{s}.cosine_decay(1.0e-2)",
  "#{s}.cosine_decay(1.0e-2, decay_steps: 100, alpha: 0.1)",
  "#{s}.constant(1.0e-2)",
  "#{s}.constant(0.5)",
  "#{s}.polynomial_decay(1.0e-2)",
  "#{s}.polynomial_decay(1.0e-2, end_value: 1.0e-4, power: 2, transition_steps: 50, transition_begin: 2)"
]
functions =
  for {text, i} <- Enum.with_index(schedules) do
    "  # #{text}\n  deftransform schedule#{i}(step), do: #{text}.(step)\n"
  end
File.write!("schedules.ex", "defmodule Schedule do\n  import Nx.Defn\n#{Enum.join(functions)}end\n")
lines =
  for {text, i} <- Enum.with_index(schedules), step <- [0, 5, 50, 500, 2000] do
    {f, _} = Code.eval_string(text)
    "schedule#{i} #{step} #{Nx.to_number(f.(Nx.tensor(step)))} #{text}"
  end
File.write!("schedules.txt", Enum.join(lines, "\n") <> "\n")
