# Per-call cost from Elixir, next to the same compiled function called from
# C: softmax f32[1000] and an MNIST-sized predict (784-128-10, batch 30).
# Run by run.sh (mix run in elixir/, with nxc built); prints one table.
defmodule Overhead.Defns do
  import Nx.Defn

  defn softmax(x), do: Nx.exp(x - Nx.reduce_max(x)) / Nx.sum(Nx.exp(x - Nx.reduce_max(x)))

  defn predict({w1, b1, w2, b2}, x) do
    h = Nx.sigmoid(Nx.dot(x, w1) + b1)
    logits = Nx.dot(h, w2) + b2
    Nx.exp(logits) / Nx.sum(Nx.exp(logits), axes: [1], keep_axes: true)
  end
end

defmodule Overhead do
  # The best of 5 rounds of `calls` calls, in microseconds per call.
  def time(fun, calls) do
    for _ <- 1..div(calls, 10) + 1, do: fun.()

    Enum.map(1..5, fn _ ->
      {us, _} = :timer.tc(fn -> Enum.each(1..calls, fn _ -> fun.() end) end)
      us / calls
    end)
    |> Enum.min()
  end

  def c_time(dir, symbol, calls) do
    lib = Path.join(dir, "liboverhead_compiled.so")
    {out, 0} = System.cmd(System.fetch_env!("CALL_PACKED"), [lib, symbol, Integer.to_string(calls)])
    out |> String.trim() |> String.to_float()
  end

  def uniform(shape, seed) do
    {t, _} = Nx.Random.uniform(Nx.Random.key(seed), -0.5, 0.5, shape: shape, type: :f32)
    t
  end

  def run do
    dir = Path.join(System.tmp_dir!(), "nxc-overhead-#{System.unique_integer([:positive])}")
    params = {uniform({784, 128}, 1), uniform({128}, 2), uniform({128, 10}, 3), uniform({10}, 4)}
    x1000 = uniform({1000}, 5)
    x30 = uniform({30, 784}, 6)

    :ok =
      Nxc.export_aot(dir, Overhead.Compiled, [
        {:softmax, &Overhead.Defns.softmax/1, [Nx.template({1000}, :f32)]},
        {:predict, &Overhead.Defns.predict(params, &1), [Nx.template({30, 784}, :f32)]}
      ])

    Code.compile_string("""
    defmodule Overhead.Compiled do
      require Nxc
      Nxc.import_aot(#{inspect(dir)}, Overhead.Compiled)
    end
    """)

    jit_softmax = Nx.Defn.jit(&Overhead.Defns.softmax/1, compiler: Nxc)
    jit_predict = Nx.Defn.jit(&Overhead.Defns.predict(params, &1), compiler: Nxc)
    eval_softmax = Nx.Defn.jit(&Overhead.Defns.softmax/1, compiler: Nx.Defn.Evaluator)
    eval_predict = Nx.Defn.jit(&Overhead.Defns.predict(params, &1), compiler: Nx.Defn.Evaluator)

    rows = [
      {"softmax f32[1000]", 4000 + 1000 * 4, 20_000, fn -> jit_softmax.(x1000) end,
       fn -> Overhead.Compiled.softmax(x1000) end, fn -> eval_softmax.(x1000) end, "overhead_compiled_softmax"},
      {"predict f32[30,784]", 30 * 784 * 4 + 30 * 10 * 4, 2_000, fn -> jit_predict.(x30) end,
       fn -> Overhead.Compiled.predict(x30) end, fn -> eval_predict.(x30) end, "overhead_compiled_predict"}
    ]

    IO.puts("CPU: #{cpu()}; one scheduler thread, best of 5 rounds, microseconds per call")
    IO.puts("| function | C (FN_packed) | Elixir, imported AOT | Elixir, compiler: Nxc | AOT - C | JIT / AOT | Nx.Defn.Evaluator |")
    IO.puts("|---|---|---|---|---|---|---|")

    for {name, bytes, calls, jit, aot, eval, symbol} <- rows do
      c = c_time(dir, symbol, calls)
      # Alternated, the best of each: the first measured would otherwise pay
      # for warming the caches and the clock.
      [a1, j1, a2, j2] = Enum.map([aot, jit, aot, jit], &time(&1, calls))
      {a, j} = {min(a1, a2), min(j1, j2)}
      e = time(eval, max(div(calls, 100), 5))

      IO.puts(
        "| #{name} (#{bytes} bytes in and out) | #{f(c)} | #{f(a)} | #{f(j)} | #{f(a - c)} | #{:erlang.float_to_binary(j / a, decimals: 3)} | #{f(e)} |"
      )
    end

    File.rm_rf!(dir)
  end

  defp f(us), do: :erlang.float_to_binary(us * 1.0, decimals: 2)

  defp cpu do
    case File.read("/proc/cpuinfo") do
      {:ok, text} ->
        name = Regex.run(~r/model name\s*:\s*(.*)/, text, capture: :all_but_first) || ["?"]
        avx512 = if text =~ "avx512f", do: "AVX-512", else: "no AVX-512"
        "#{hd(name)} (#{avx512})"

      _ ->
        "?"
    end
  end
end

Overhead.run()
